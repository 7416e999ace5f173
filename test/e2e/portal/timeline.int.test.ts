// The portal in a real browser: Debian's chromium driven by playwright-core (no browser download)
// against the whole stack as processes. The page asks for a token, shows the seed's members with
// their capacity and the nginx binding with its placement, and when member1 fails in the simulator
// its timeline advances through the failover in order: member1 tainted → eviction from member1 →
// reschedule to member2:3 → healthy on member2:3 → the eviction task dropped.
// Needs `chromium` (.ci/run installs it: apt-get install chromium) and the builds (npm run build).
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { chromium, type Browser, type Page } from "playwright-core";
import { eventually } from "@flotilla/testkit";
import { DEPLOY, clustersOf, dividedPolicy, nginx, RB, startStack, type Stack } from "../failover/harness.js";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
// a developer's machine without chromium skips it, saying why; CI must have it (the test fails there)
const skip = !existsSync(CHROMIUM) && !process.env.CI ? `no browser at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)` : false;

/** The timeline's rows, oldest first: [step, object, detail]. */
async function timeline(page: Page): Promise<string[][]> {
  const rows = await page.$$eval("#timeline tr", (trs) => trs.map((tr) => [...tr.querySelectorAll("td")].slice(1).map((td) => td.textContent ?? "")));
  return rows.reverse();
}

test("the portal's timeline follows member1's failover in a real browser: taint, eviction, reschedule, healthy, task dropped", { skip }, async (t) => {
  const s: Stack = await startStack();
  const browser: Browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"] }).catch(async (e: unknown) => {
    await s.close();
    throw e;
  });
  t.after(async () => {
    await browser.close();
    await s.close();
  });
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));

  // the page holds nothing without a token: it asks for one
  await page.goto(s.gw);
  await page.waitForSelector("#login:not([hidden])");
  await page.fill("#token", "not-a-token");
  await page.click("#login button");
  await page.waitForFunction(`document.getElementById("status")?.textContent?.includes("not accepted")`);
  await page.fill("#token", s.token);
  await page.click("#login button");
  await page.waitForFunction(`document.querySelectorAll("#clusters tr").length === 3`, undefined, { timeout: 15_000 });
  const members = await page.$$eval("#clusters tr", (trs) => trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent ?? "")));
  assert.deepEqual(members.map((r) => [r[0], r[1]]), [["member1", "Ready"], ["member2", "Ready"], ["member3", "Ready"]]);
  assert.match(members[0]![3]!, /cpu \S+ \/ 16 · memory \S+ \/ 64Gi · pods \S+ \/ 220/, "capacity: requested / allocatable");

  // the seed's Divided nginx: member1:1, member2:2
  await s.post("/apis/apps/v1/namespaces/default/deployments", nginx(3));
  await s.post("/apis/policy.karmada.io/v1alpha1/namespaces/default/propagationpolicies", dividedPolicy);
  await eventually(async () => JSON.stringify(clustersOf(await s.get(RB("nginx-deployment")))) === JSON.stringify({ member1: 1, member2: 2 }), { timeoutMs: 30_000, message: "nginx on member1:1 member2:2" });
  await eventually(async () => (await s.get(DEPLOY("nginx")))?.status?.readyReplicas === 3, { timeoutMs: 30_000, message: "nginx 3 ready" });
  await page.waitForFunction(`[...document.querySelectorAll("#bindings tr")].some((tr) => tr.textContent.includes("member1:1") && tr.textContent.includes("member2:2"))`, undefined, { timeout: 15_000 });

  // member1 fails: the timeline advances through the failover
  await s.sim.setFault("member1", { mode: "unreachable" });
  const wanted: [string, RegExp, RegExp][] = [
    ["tainted", /^member1$/, /NoSchedule|NoExecute/],
    ["eviction", /^default\/nginx-deployment$/, /^from member1/],
    ["reschedule", /^default\/nginx-deployment$/, /→ member2:3$/],
    ["healthy", /^default\/nginx-deployment$/, /on member2:3/],
    ["task-dropped", /^default\/nginx-deployment$/, /^from member1/],
  ];
  let rows: string[][] = [];
  const positions = await eventually(
    async () => {
      rows = await timeline(page);
      const at: number[] = [];
      let from = 0;
      for (const [step, object, detail] of wanted) {
        const i = rows.findIndex((r, k) => k >= from && r[0] === step && object.test(r[1] ?? "") && detail.test(r[2] ?? ""));
        if (i < 0) return undefined;
        at.push(i);
        from = i + 1;
      }
      return at;
    },
    { timeoutMs: 60_000, intervalMs: 250, message: "the failover's steps on the timeline, in order" },
  ).catch((e: Error) => {
    throw new Error(`${e.message}\ntimeline:\n${rows.map((r) => r.join(" | ")).join("\n")}`);
  });
  t.diagnostic(`timeline rows of the five steps: ${positions.join(", ")} of ${rows.length}`);
  assert.ok(rows.some((r) => r[0] === "not-ready" && r[1] === "member1"), "member1's Ready change is on the timeline too");
  assert.deepEqual(errors, [], "no script error in the page");
});
