/**
 * Tables as kubectl prints them: upper-case headers, columns left-aligned and three spaces
 * apart; and the multi-cluster view karmadactl prints (`karmadactl get po`): each member's
 * server-side Table with a CLUSTER column after NAME (NAMESPACE first across namespaces) and,
 * when Karmada propagated some of the objects (its deployments, not their pods), ADOPTION: Y for
 * those, N for the rest.
 */

/** A meta.k8s.io/v1 Table as a server answers `kubectl get`. */
export interface ServerTable {
  columnDefinitions: Array<{ name: string; priority?: number }>;
  rows: Array<{ cells: unknown[]; object?: { metadata?: { namespace?: string; labels?: Record<string, string> } } }>;
}

export interface Printed {
  headers: string[];
  rows: string[][];
}

/** kubectl's tabwriter layout: every column as wide as its widest cell plus three spaces, the last one unpadded. */
export function renderTable(t: Printed, o: { noHeaders?: boolean } = {}): string {
  const all = o.noHeaders ? t.rows : [t.headers, ...t.rows];
  const widths = t.headers.map((_, i) => Math.max(...all.map((r) => (r[i] ?? "").length)));
  return all.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]! + 3))).join("").trimEnd() + "\n").join("");
}

const cell = (v: unknown): string => (v === undefined || v === null ? "<none>" : typeof v === "object" ? JSON.stringify(v) : String(v));

/** The label Karmada puts on every member object it created (ADOPTION Y). */
const MANAGED = "karmada.io/managed";

/**
 * One table from the members' tables, in the order given: NAMESPACE (across namespaces), NAME,
 * CLUSTER, the member's other columns (priority 0; every column with `wide`), and ADOPTION when
 * some row is Karmada's.
 */
export function mergeMemberTables(results: ReadonlyArray<{ cluster: string; table: ServerTable }>, o: { allNamespaces?: boolean; wide?: boolean } = {}): Printed {
  const first = results.find((r) => r.table.columnDefinitions.length)?.table;
  const defs = (first?.columnDefinitions ?? [{ name: "Name" }]).map((d, i) => ({ ...d, i })).filter((d) => o.wide || !d.priority);
  const nameAt = defs.findIndex((d) => d.name.toLowerCase() === "name");
  const headers = [...(o.allNamespaces ? ["NAMESPACE"] : []), ...defs.map((d) => d.name.toUpperCase())];
  headers.splice((o.allNamespaces ? 1 : 0) + nameAt + 1, 0, "CLUSTER");
  const rows: string[][] = [];
  let adopted = false;
  for (const { cluster, table } of results) {
    // members of other versions may print other columns: match them by name
    const byName = new Map(table.columnDefinitions.map((d, i) => [d.name.toLowerCase(), i]));
    for (const row of table.rows) {
      const cells = defs.map((d) => {
        const i = byName.get(d.name.toLowerCase());
        return i === undefined ? "" : cell(row.cells[i]);
      });
      cells.splice(nameAt + 1, 0, cluster);
      const meta = row.object?.metadata;
      const managed = meta?.labels?.[MANAGED] === "true";
      adopted ||= managed;
      rows.push([...(o.allNamespaces ? [meta?.namespace ?? ""] : []), ...cells, managed ? "Y" : "N"]);
    }
  }
  if (!adopted) return { headers, rows: rows.map((r) => r.slice(0, -1)) };
  return { headers: [...headers, "ADOPTION"], rows };
}

/** One server Table as kubectl prints it (the control plane's own objects: `get clusters`). */
export function serverTable(t: ServerTable, o: { wide?: boolean } = {}): Printed {
  const defs = t.columnDefinitions.map((d, i) => ({ ...d, i })).filter((d) => o.wide || !d.priority);
  return { headers: defs.map((d) => d.name.toUpperCase()), rows: t.rows.map((r) => defs.map((d) => cell(r.cells[d.i]))) };
}
