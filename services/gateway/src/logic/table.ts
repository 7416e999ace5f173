import type { KubeObject, ResourceType } from "@flotilla/api";

/**
 * Server-side printing (meta.k8s.io/v1 Table), what `kubectl get` asks for with
 * `Accept: application/json;as=Table;g=meta.k8s.io;v=v1`: Karmada's printer columns for its kinds
 * (the CRDs' additionalPrinterColumns), Kubernetes' for Deployments, NAME and AGE for the rest.
 */
export interface TableColumn {
  name: string;
  type: "string" | "integer" | "date";
  format?: string;
  description: string;
  priority: number;
}

type Cell = string | number;
interface Printer {
  columns: TableColumn[];
  cells: (o: KubeObject, now: Date) => Cell[];
}

const NAME: TableColumn = { name: "Name", type: "string", format: "name", description: "Name must be unique within a namespace.", priority: 0 };
const AGE: TableColumn = { name: "Age", type: "string", description: "CreationTimestamp is the time the object was created.", priority: 0 };
const col = (name: string, description: string, type: TableColumn["type"] = "string", priority = 0): TableColumn => ({ name, type, description, priority });

type Obj = { spec?: Record<string, unknown>; status?: { conditions?: Array<{ type?: string; status?: string }> } & Record<string, unknown> };
const cond = (o: KubeObject, type: string) => (o as Obj).status?.conditions?.find((c) => c.type === type)?.status ?? "";
const str = (v: unknown) => (v === undefined || v === null ? "" : typeof v === "object" ? JSON.stringify(v) : String(v));

/** Kubernetes' short age: 45s, 12m, 3h, 5d, 2y (duration.HumanDuration, simplified to one unit). */
export function age(created: string | undefined, now: Date): string {
  if (!created) return "<unknown>";
  const s = Math.max(0, Math.floor((now.getTime() - Date.parse(created)) / 1000));
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 120) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h`;
  const d = Math.floor(h / 24);
  return d < 730 ? `${d}d` : `${Math.floor(d / 365)}y`;
}

const PRINTERS: Record<string, Printer> = {
  "cluster.karmada.io/Cluster": {
    columns: [NAME, col("Version", "Kubernetes version of the member"), col("Mode", "Push or Pull"), col("Ready", "the Ready condition"), AGE, col("APIEndpoint", "the member's API server", "string", 1)],
    cells: (o, now) => [o.metadata.name ?? "", str((o as Obj).status?.kubernetesVersion), str((o as Obj).spec?.syncMode), cond(o, "Ready"), age(o.metadata.creationTimestamp, now), str((o as Obj).spec?.apiEndpoint)],
  },
  "policy.karmada.io/PropagationPolicy": policyPrinter(),
  "policy.karmada.io/ClusterPropagationPolicy": policyPrinter(),
  "work.karmada.io/ResourceBinding": bindingPrinter(),
  "work.karmada.io/ClusterResourceBinding": bindingPrinter(),
  "work.karmada.io/Work": {
    columns: [NAME, col("Workload-Kind", "the kinds of the manifests"), col("Applied", "the Applied condition"), AGE],
    cells: (o, now) => {
      const manifests = ((o as Obj).spec?.workload as { manifests?: Array<{ kind?: string }> } | undefined)?.manifests ?? [];
      return [o.metadata.name ?? "", manifests.map((m) => m.kind ?? "").join(","), cond(o, "Applied"), age(o.metadata.creationTimestamp, now)];
    },
  },
  "apps/Deployment": {
    columns: [NAME, col("Ready", "ready of desired replicas"), col("Up-to-date", "updated replicas", "integer"), col("Available", "available replicas", "integer"), AGE],
    cells: (o, now) => {
      const st = ((o as Obj).status ?? {}) as Record<string, number | undefined>;
      const want = ((o as Obj).spec?.replicas as number | undefined) ?? 1;
      return [o.metadata.name ?? "", `${st.readyReplicas ?? 0}/${want}`, st.updatedReplicas ?? 0, st.availableReplicas ?? 0, age(o.metadata.creationTimestamp, now)];
    },
  },
};

function policyPrinter(): Printer {
  return {
    columns: [NAME, col("Conflict-Resolution", "what happens when the resource exists on a member"), col("Priority", "which policy wins when several match", "integer"), AGE],
    cells: (o, now) => [o.metadata.name ?? "", str((o as Obj).spec?.conflictResolution ?? "Abort"), Number((o as Obj).spec?.priority ?? 0), age(o.metadata.creationTimestamp, now)],
  };
}

function bindingPrinter(): Printer {
  return {
    columns: [NAME, col("Scheduled", "the Scheduled condition"), col("FullyApplied", "the FullyApplied condition"), AGE],
    cells: (o, now) => [o.metadata.name ?? "", cond(o, "Scheduled"), cond(o, "FullyApplied"), age(o.metadata.creationTimestamp, now)],
  };
}

const DEFAULT: Printer = { columns: [NAME, AGE], cells: (o, now) => [o.metadata.name ?? "", age(o.metadata.creationTimestamp, now)] };

/** Whether an Accept header asks for a meta.k8s.io/v1 Table (kubectl get). */
export function wantsTable(accept: string | undefined): boolean {
  return (accept ?? "").split(",").some((part) => {
    const params = new Map(part.split(";").slice(1).map((p) => p.trim().split("=") as [string, string]));
    return params.get("as") === "Table" && params.get("g") === "meta.k8s.io" && params.get("v") === "v1";
  });
}

export function toTable(
  t: Pick<ResourceType, "group" | "kind">,
  items: KubeObject[],
  meta: { resourceVersion?: string; continue?: string; remainingItemCount?: number },
  o: { includeObject?: string; now?: Date } = {},
): Record<string, unknown> {
  const p = PRINTERS[`${t.group}/${t.kind}`] ?? DEFAULT;
  const now = o.now ?? new Date();
  // kubectl asks for the metadata of each row (includeObject=Metadata, the default)
  const include = o.includeObject ?? "Metadata";
  const object = (item: KubeObject) => (include === "None" ? {} : { object: include === "Object" ? item : { kind: "PartialObjectMetadata", apiVersion: "meta.k8s.io/v1", metadata: item.metadata } });
  return {
    kind: "Table",
    apiVersion: "meta.k8s.io/v1",
    metadata: { resourceVersion: meta.resourceVersion, ...(meta.continue ? { continue: meta.continue } : {}), ...(meta.remainingItemCount !== undefined ? { remainingItemCount: meta.remainingItemCount } : {}) },
    columnDefinitions: p.columns,
    rows: items.map((item) => ({ cells: p.cells(item, now), ...object(item) })),
  };
}
