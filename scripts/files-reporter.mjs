// A node:test reporter that writes one JSON line per test file: whether its report arrived whole
// (at least one test reported, and the file's own closing summary came) and how many of its
// tests passed, as the spec reporter counts them (suites and the synthetic test of a file
// without tests left out). \`scripts/test.mjs\` runs the files that did not arrive whole again,
// and takes their passes here out of the total so that none is counted twice. A report cut off
// before its end (nodejs/node#64833 with --test-force-exit) lacks the file's summary.
import path from "node:path";

export default async function* filesReporter(source) {
  const files = new Map();
  const of = (file) => {
    let f = files.get(file);
    if (!f) files.set(file, (f = { file, tested: false, summarized: false, pass: 0 }));
    return f;
  };
  for await (const event of source) {
    const { file, name, details } = event.data ?? {};
    if (!file) continue;
    if (event.type === "test:summary") of(file).summarized = true;
    else if ((event.type === "test:pass" || event.type === "test:fail") && path.resolve(String(name)) !== file && details?.type !== "suite") {
      const f = of(file);
      f.tested = true;
      if (event.type === "test:pass" && !details?.skip && !details?.todo) f.pass++;
    }
  }
  for (const f of files.values()) yield JSON.stringify({ file: f.file, whole: f.tested && f.summarized, pass: f.pass }) + "\n";
}
