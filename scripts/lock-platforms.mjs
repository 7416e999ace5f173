// The npm registry these machines use serves only the linux builds of @bufbuild/buf's
// platform packages, so `npm install` leaves the others out of package-lock.json and `npm ci`
// then refuses the lock ("Missing: @bufbuild/buf-darwin-arm64 from lock file"). This puts the
// missing platform entries back (npm ci skips them on linux by their os/cpu fields).
// Run after any `npm install`: node scripts/lock-platforms.mjs
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { root } from "./lib.mjs";

const file = path.join(root, "package-lock.json");
const lock = JSON.parse(readFileSync(file, "utf8"));
let added = 0;
for (const [p, entry] of Object.entries(lock.packages)) {
  if (!entry.optionalDependencies || !p.endsWith("node_modules/@bufbuild/buf")) continue;
  for (const [dep, version] of Object.entries(entry.optionalDependencies)) {
    const key = `node_modules/${dep}`;
    if (lock.packages[key]) continue;
    const m = /-(darwin|linux|win32)-([a-z0-9]+)$/.exec(dep);
    if (!m) continue;
    const cpu = { aarch64: "arm64", armv7: "arm", x64: "x64", arm64: "arm64" }[m[2]] ?? m[2];
    lock.packages[key] = { version, cpu: [cpu], dev: true, license: "Apache-2.0", optional: true, os: [m[1]], engines: { node: ">=12" } };
    added++;
  }
}
lock.packages = Object.fromEntries(Object.entries(lock.packages).sort(([a], [b]) => (a === "" ? -1 : b === "" ? 1 : a.localeCompare(b))));
writeFileSync(file, JSON.stringify(lock, null, 2) + "\n");
console.log(`lock-platforms: ${added} entries added`);
