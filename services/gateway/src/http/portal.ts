import { TIMELINE_JS } from "../logic/timeline.js";

/**
 * The portal: one page that lists clusters (readiness, taints, capacity), bindings (placement,
 * eviction tasks, health) and events, and a live timeline of what changes (taint → eviction →
 * reschedule → healthy → task dropped, logic/timeline.ts), kept live through the API's own watch
 * streams. Plain HTML and browser JavaScript against the REST API with the token the user enters
 * (kept in the tab's sessionStorage); the page itself holds no data and needs no token.
 */
export function portalPage(): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Flotilla</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
  :root { --ok:#137333; --bad:#b3261e; --warn:#9a6700; --mut:#5f6368; }
  body { font: 14px/1.45 system-ui, sans-serif; margin: 1.5rem; color:#202124; }
  h1 { font-size: 1.3rem; margin: 0 0 .25rem } h2 { font-size: 1.05rem; margin: 1.5rem 0 .5rem }
  table { border-collapse: collapse; width: 100%; } th, td { text-align: left; padding: .3rem .6rem; border-bottom: 1px solid #e0e0e0; vertical-align: top }
  th { font-weight: 600; color: var(--mut) } code { font-size: .9em }
  .ok { color: var(--ok); font-weight: 600 } .bad { color: var(--bad); font-weight: 600 } .warn { color: var(--warn); font-weight: 600 }
  .pill { display:inline-block; padding: 0 .45rem; margin: 0 .25rem .15rem 0; border-radius: .6rem; background:#eef; font-size:.85em }
  .pill.taint { background:#fde7e7 } .pill.task { background:#fff4d6 } .muted { color: var(--mut) }
  #status { color: var(--mut); font-size: .9em }
  .step { display:inline-block; min-width: 6.5rem; font-weight: 600 }
  .step-tainted, .step-not-ready, .step-eviction { color: var(--bad) } .step-reschedule { color: var(--warn) }
  .step-healthy, .step-ready, .step-untainted, .step-task-dropped { color: var(--ok) }
</style></head>
<body>
<h1>Flotilla</h1><div id="status">connecting…</div>
<form id="login" hidden><label>Bearer token <input id="token" type="password" size="48" autocomplete="off"></label> <button>Connect</button>
<span class="muted">(npm start prints where the admin token is; it stays in this tab only)</span></form>
<h2>Clusters</h2>
<table><thead><tr><th>name</th><th>ready</th><th>taints</th><th>capacity (requested / allocatable)</th><th>region / zone / provider</th><th>endpoint</th></tr></thead><tbody id="clusters"></tbody></table>
<h2>Timeline</h2>
<div class="muted">what changed since this page opened: taints, evictions, reschedules, health, eviction tasks dropped (newest first)</div>
<table><thead><tr><th>time</th><th>step</th><th>object</th><th>detail</th></tr></thead><tbody id="timeline"></tbody></table>
<h2>Bindings</h2>
<table><thead><tr><th>binding</th><th>resource</th><th>replicas</th><th>placement</th><th>eviction tasks</th><th>scheduled</th><th>health</th></tr></thead><tbody id="bindings"></tbody></table>
<h2>Events</h2>
<table><thead><tr><th>time</th><th>type</th><th>reason</th><th>object</th><th>message</th></tr></thead><tbody id="events"></tbody></table>
<script>
const state = { clusters: new Map(), bindings: new Map(), clusterBindings: new Map(), events: new Map(), timeline: [] };
${TIMELINE_JS}
const esc = (s) => String(s ?? "").replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);
const key = (o) => (o.metadata.namespace ? o.metadata.namespace + "/" : "") + o.metadata.name;
const cond = (o, t) => (o.status?.conditions ?? []).find((c) => c.type === t);
const age = (ts) => { if (!ts) return ""; const s = Math.max(0, Math.round((Date.now() - Date.parse(ts)) / 1000)); return s < 120 ? s + "s" : Math.round(s / 60) + "m"; };

function render() {
  document.getElementById("clusters").innerHTML = [...state.clusters.values()].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name)).map((c) => {
    const r = cond(c, "Ready");
    const ready = !r ? '<span class="warn">unknown</span>' : r.status === "True" ? '<span class="ok">Ready</span>' : '<span class="bad">' + esc(r.status === "False" ? "NotReady" : "Unknown") + '</span> <span class="muted">' + esc(r.reason) + "</span>";
    const taints = (c.spec?.taints ?? []).map((t) => '<span class="pill taint">' + esc(t.key) + (t.value ? "=" + esc(t.value) : "") + ":" + esc(t.effect) + (t.timeAdded ? " · " + age(t.timeAdded) : "") + "</span>").join("");
    const sum = c.status?.resourceSummary ?? {};
    const capacity = ["cpu", "memory", "pods"].filter((r) => sum.allocatable?.[r] !== undefined).map((r) => esc(r) + " " + esc(sum.allocated?.[r] ?? "0") + " / " + esc(sum.allocatable[r])).join(" · ");
    return "<tr><td>" + esc(c.metadata.name) + "</td><td>" + ready + "</td><td>" + taints + '</td><td class="muted">' + capacity + "</td><td>" + [c.spec?.region, (c.spec?.zones ?? []).join(","), c.spec?.provider].map(esc).join(" / ") + "</td><td><code>" + esc(c.spec?.apiEndpoint) + "</code></td></tr>";
  }).join("");
  document.getElementById("bindings").innerHTML = [...state.bindings.values(), ...state.clusterBindings.values()].sort((a, b) => key(a).localeCompare(key(b))).map((b) => {
    const placement = (b.spec?.clusters ?? []).map((t) => '<span class="pill">' + esc(t.name) + ":" + esc(t.replicas ?? 0) + "</span>").join("");
    const tasks = (b.spec?.gracefulEvictionTasks ?? []).map((t) => '<span class="pill task">' + esc(t.fromCluster) + " · " + esc(t.reason) + (t.creationTimestamp ? " · " + age(t.creationTimestamp) : "") + "</span>").join("");
    const s = cond(b, "Scheduled");
    const sched = !s ? "" : s.status === "True" ? '<span class="ok">yes</span>' : '<span class="bad">' + esc(s.reason) + '</span> <span class="muted">' + esc(s.message) + "</span>";
    const health = (b.status?.aggregatedStatus ?? []).map((a) => '<span class="pill ' + (a.health === "Healthy" ? "" : "taint") + '">' + esc(a.clusterName) + ": " + esc(a.health ?? (a.applied ? "Applied" : "NotApplied")) + "</span>").join("");
    const r = b.spec?.resource ?? {};
    return "<tr><td>" + esc(key(b)) + "</td><td>" + esc(r.kind) + " " + esc(r.name) + "</td><td>" + esc(b.spec?.replicas ?? 0) + "</td><td>" + placement + "</td><td>" + tasks + "</td><td>" + sched + "</td><td>" + health + "</td></tr>";
  }).join("");
  document.getElementById("timeline").innerHTML = state.timeline.slice(-200).reverse().map((e) =>
    '<tr data-step="' + esc(e.step) + '"><td>' + esc(e.time) + '</td><td><span class="step step-' + esc(e.step) + '">' + esc(e.step) + "</span></td><td>" + esc(e.object) + "</td><td>" + esc(e.detail) + "</td></tr>").join("");
  document.getElementById("events").innerHTML = [...state.events.values()].sort((a, b) => String(b.lastTimestamp ?? b.metadata.creationTimestamp).localeCompare(String(a.lastTimestamp ?? a.metadata.creationTimestamp))).slice(0, 100).map((e) =>
    "<tr><td>" + esc(age(e.lastTimestamp ?? e.metadata.creationTimestamp)) + "</td><td>" + esc(e.type) + "</td><td>" + esc(e.reason) + "</td><td>" + esc((e.involvedObject?.kind ?? "") + " " + (e.involvedObject?.namespace ? e.involvedObject.namespace + "/" : "") + (e.involvedObject?.name ?? "")) + "</td><td>" + esc(e.message) + "</td></tr>").join("");
}

let pending = false;
const schedule = () => { if (!pending) { pending = true; requestAnimationFrame(() => { pending = false; render(); }); } };

let token = sessionStorage.getItem("flotilla-token") ?? "";
let waiters = [];
const login = document.getElementById("login");
login.addEventListener("submit", (e) => {
  e.preventDefault();
  token = document.getElementById("token").value.trim();
  sessionStorage.setItem("flotilla-token", token);
  login.hidden = true;
  for (const w of waiters.splice(0)) w();
});
/** fetch with the token; a 401 or 403 asks for another one. */
async function api(path) {
  for (;;) {
    if (token) {
      const res = await fetch(path, { headers: { authorization: "Bearer " + token } });
      if (res.status !== 401 && res.status !== 403) return res;
      const s = await res.json().catch(() => ({}));
      document.getElementById("status").textContent = (res.status === 401 ? "the token was not accepted" : s.message ?? "forbidden") + ": enter a token";
    } else document.getElementById("status").textContent = "enter a token";
    login.hidden = false;
    await new Promise((r) => waiters.push(r));
  }
}

/** Adds the steps between two versions of an object to the timeline (kind undefined: not followed). */
function record(kind, before, after) {
  if (!kind) return;
  const time = new Date().toLocaleTimeString();
  for (const e of timelineSteps(kind, before, after)) state.timeline.push({ time, ...e });
  if (state.timeline.length > 1000) state.timeline.splice(0, state.timeline.length - 1000);
}

async function follow(path, map, kind) {
  let listed = false;
  for (;;) {
    try {
      const list = await (await api(path)).json();
      // a list after a reconnect: what changed meanwhile goes on the timeline (the first list is where it starts)
      const before = new Map(map);
      map.clear();
      for (const o of list.items ?? []) {
        if (listed) record(kind, before.get(key(o)), o);
        map.set(key(o), o);
      }
      listed = true;
      schedule();
      const res = await api(path + (path.includes("?") ? "&" : "?") + "watch=true&resourceVersion=" + list.metadata.resourceVersion);
      const reader = res.body.getReader();
      const dec = new TextDecoder();
      let buf = "";
      document.getElementById("status").textContent = "live · " + new Date().toLocaleTimeString();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += dec.decode(value, { stream: true });
        let i;
        while ((i = buf.indexOf("\\n")) >= 0) {
          const line = buf.slice(0, i); buf = buf.slice(i + 1);
          if (!line.trim()) continue;
          const ev = JSON.parse(line);
          if (ev.type === "ERROR") throw new Error(ev.object?.message ?? "watch error");
          if (ev.type === "DELETED") map.delete(key(ev.object));
          else {
            record(kind, map.get(key(ev.object)), ev.object);
            map.set(key(ev.object), ev.object);
          }
          schedule();
        }
      }
    } catch (e) {
      document.getElementById("status").textContent = "reconnecting: " + e.message;
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
}
follow("/apis/cluster.karmada.io/v1alpha1/clusters", state.clusters, "Cluster");
follow("/apis/work.karmada.io/v1alpha2/resourcebindings", state.bindings, "ResourceBinding");
follow("/apis/work.karmada.io/v1alpha2/clusterresourcebindings", state.clusterBindings, "ClusterResourceBinding");
follow("/api/v1/events", state.events);
setInterval(schedule, 5000);
</script>
</body></html>`;
}
