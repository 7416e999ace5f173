import type { KubeObject } from "./types.js";
import type { ResourceType } from "./resources.js";

/**
 * Server-side printing (meta.k8s.io/v1 Table), what `kubectl get` asks for with
 * `Accept: application/json;as=Table;g=meta.k8s.io;v=v1`: Karmada's printer columns for its kinds
 * (the CRDs' additionalPrinterColumns), Kubernetes' for the built-in kinds a member serves (pods,
 * workloads, nodes, services, namespaces; pkg/printers/internalversion), NAME and AGE for the rest.
 * Used by the gateway for its objects and by the member simulator for a member's.
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
  "/Pod": {
    columns: [
      NAME,
      col("Ready", "The aggregate readiness state of this pod for accepting traffic."),
      col("Status", "The aggregate status of the containers in this pod."),
      col("Restarts", "The number of times the containers in this pod have been restarted.", "string"),
      AGE,
      col("IP", "The IP address assigned to the pod.", "string", 1),
      col("Node", "The node the pod is scheduled on.", "string", 1),
      col("Nominated Node", "The node the pod may be scheduled on when its preemption goes through.", "string", 1),
      col("Readiness Gates", "The readiness gates of the pod.", "string", 1),
    ],
    cells: (o, now) => {
      const st = ((o as Obj).status ?? {}) as { phase?: string; reason?: string; podIP?: string; nominatedNodeName?: string; containerStatuses?: Array<{ ready?: boolean; restartCount?: number; state?: { waiting?: { reason?: string }; terminated?: { reason?: string } } }> };
      const containers = (((o as Obj).spec?.containers as unknown[] | undefined) ?? []).length;
      const cs = st.containerStatuses ?? [];
      const waiting = cs.map((c) => c.state?.waiting?.reason ?? c.state?.terminated?.reason).find(Boolean);
      const status = o.metadata.deletionTimestamp ? "Terminating" : (st.reason ?? waiting ?? st.phase ?? "Unknown");
      const gates = (((o as Obj).spec?.readinessGates as unknown[] | undefined) ?? []).length;
      return [
        o.metadata.name ?? "",
        `${cs.filter((c) => c.ready).length}/${containers}`,
        status,
        String(cs.reduce((n, c) => n + (c.restartCount ?? 0), 0)),
        age(o.metadata.creationTimestamp, now),
        st.podIP || "<none>",
        str((o as Obj).spec?.nodeName) || "<none>",
        st.nominatedNodeName || "<none>",
        gates ? `0/${gates}` : "<none>",
      ];
    },
  },
  "/Node": {
    columns: [NAME, col("Status", "The status of the node"), col("Roles", "The roles of the node"), AGE, col("Version", "Kubelet Version reported by the node."), col("Internal-IP", "The internal IP of the node.", "string", 1)],
    cells: (o, now) => {
      const ready = cond(o, "Ready") === "True" ? "Ready" : "NotReady";
      const unschedulable = (o as Obj).spec?.unschedulable ? ",SchedulingDisabled" : "";
      const st = ((o as Obj).status ?? {}) as { nodeInfo?: { kubeletVersion?: string }; addresses?: Array<{ type?: string; address?: string }> };
      return [o.metadata.name ?? "", ready + unschedulable, "<none>", age(o.metadata.creationTimestamp, now), st.nodeInfo?.kubeletVersion ?? "", st.addresses?.find((a) => a.type === "InternalIP")?.address ?? "<none>"];
    },
  },
  "/Namespace": {
    columns: [NAME, col("Status", "The status of the namespace"), AGE],
    cells: (o, now) => [o.metadata.name ?? "", str(((o as Obj).status as { phase?: string } | undefined)?.phase) || "Active", age(o.metadata.creationTimestamp, now)],
  },
  "/Service": {
    columns: [NAME, col("Type", "The type of service."), col("Cluster-IP", "The cluster IP of the service."), col("External-IP", "The external IPs of the service."), col("Port(s)", "The ports of the service."), AGE, col("Selector", "The selector of the service.", "string", 1)],
    cells: (o, now) => {
      const spec = ((o as Obj).spec ?? {}) as { type?: string; clusterIP?: string; externalIPs?: string[]; ports?: Array<{ port?: number; protocol?: string; nodePort?: number }>; selector?: Record<string, string> };
      const ports = (spec.ports ?? []).map((p) => `${p.port}${p.nodePort ? `:${p.nodePort}` : ""}/${p.protocol ?? "TCP"}`).join(",");
      const selector = Object.entries(spec.selector ?? {}).map(([k, v]) => `${k}=${v}`).join(",");
      return [o.metadata.name ?? "", spec.type ?? "ClusterIP", spec.clusterIP || "<none>", spec.externalIPs?.join(",") || "<none>", ports || "<none>", age(o.metadata.creationTimestamp, now), selector || "<none>"];
    },
  },
  "/ConfigMap": {
    columns: [NAME, col("Data", "Number of data entries", "integer"), AGE],
    cells: (o, now) => [o.metadata.name ?? "", Object.keys(((o as Record<string, unknown>).data as object | undefined) ?? {}).length + Object.keys(((o as Record<string, unknown>).binaryData as object | undefined) ?? {}).length, age(o.metadata.creationTimestamp, now)],
  },
  "/Secret": {
    columns: [NAME, col("Type", "The type of the secret"), col("Data", "Number of data entries", "integer"), AGE],
    cells: (o, now) => [o.metadata.name ?? "", str((o as Record<string, unknown>).type) || "Opaque", Object.keys(((o as Record<string, unknown>).data as object | undefined) ?? {}).length, age(o.metadata.creationTimestamp, now)],
  },
  "apps/StatefulSet": {
    columns: [NAME, col("Ready", "Number of the pod with ready state"), AGE],
    cells: (o, now) => [o.metadata.name ?? "", `${Number(((o as Obj).status as { readyReplicas?: number } | undefined)?.readyReplicas ?? 0)}/${Number((o as Obj).spec?.replicas ?? 1)}`, age(o.metadata.creationTimestamp, now)],
  },
  "apps/Deployment": {
    columns: [
      NAME,
      col("Ready", "ready of desired replicas"),
      col("Up-to-date", "updated replicas", "integer"),
      col("Available", "available replicas", "integer"),
      AGE,
      col("Containers", "Names of each container in the template.", "string", 1),
      col("Images", "Images referenced by each container in the template.", "string", 1),
      col("Selector", "Label selector for pods.", "string", 1),
    ],
    cells: (o, now) => {
      const st = ((o as Obj).status ?? {}) as Record<string, number | undefined>;
      const spec = ((o as Obj).spec ?? {}) as { replicas?: number; selector?: { matchLabels?: Record<string, string> }; template?: { spec?: { containers?: Array<{ name?: string; image?: string }> } } };
      const containers = spec.template?.spec?.containers ?? [];
      const selector = Object.entries(spec.selector?.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`).join(",");
      return [
        o.metadata.name ?? "",
        `${st.readyReplicas ?? 0}/${spec.replicas ?? 1}`,
        st.updatedReplicas ?? 0,
        st.availableReplicas ?? 0,
        age(o.metadata.creationTimestamp, now),
        containers.map((c) => c.name ?? "").join(","),
        containers.map((c) => c.image ?? "").join(","),
        selector || "<none>",
      ];
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
