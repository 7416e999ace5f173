import { renderTable } from "./table.js";

/**
 * `flotilla history rb/<name>`: a binding's placement history (the gateway's
 * PlacementChangeList) as a table, oldest first, one row per change of `spec.clusters`.
 */

interface Target {
  name?: string;
  replicas?: number;
}

/** The fields of the gateway's PlacementChangeList this command prints. */
export interface PlacementChangeList {
  binding?: { kind?: string; namespace?: string; name?: string };
  items?: Array<{
    time?: string;
    resourceVersion?: string;
    trigger?: string;
    reason?: string;
    message?: string;
    producer?: string;
    actor?: { kind?: string; name?: string };
    from?: Target[];
    to?: Target[];
  }>;
}

/** `member1:1,member2:2`; `-` for no cluster; a cluster without replicas (Duplicated, or none yet) by its name alone. */
export function placementText(ts: readonly Target[] | undefined): string {
  if (!ts?.length) return "-";
  return ts.map((t) => (t.replicas ? `${t.name ?? ""}:${t.replicas}` : (t.name ?? ""))).join(",");
}

/** `service/scheduler`, `user/alice`; `-` when the writer was not recorded. */
function actorText(a: { kind?: string; name?: string } | undefined): string {
  if (!a?.name) return "-";
  return `${(a.kind ?? "unknown").toLowerCase()}/${a.name}`;
}

/** The time to the second (the answer carries microseconds). */
const second = (t: string | undefined) => (t ? t.replace(/\.\d+Z$/, "Z") : "-");

/** The table `flotilla history` prints; `wide` adds the producer and the message. */
export function historyTable(list: PlacementChangeList, o: { wide?: boolean } = {}): string {
  const b = list.binding;
  const head = `${b?.kind ?? "binding"} ${b?.namespace ? `${b.namespace}/` : ""}${b?.name ?? ""}: ${list.items?.length ?? 0} placement change(s)\n`;
  if (!list.items?.length) return head;
  const headers = ["TIME", "TRIGGER", "REASON", "FROM", "TO", "BY", ...(o.wide ? ["PRODUCER", "MESSAGE"] : [])];
  const rows = list.items.map((c) => [
    second(c.time),
    c.trigger ?? "-",
    c.reason || "-",
    placementText(c.from),
    placementText(c.to),
    actorText(c.actor),
    ...(o.wide ? [c.producer || "-", c.message || "-"] : []),
  ]);
  return head + renderTable({ headers, rows });
}
