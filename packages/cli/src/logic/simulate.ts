import { bindingName, type Cluster } from "@flotilla/api";

/**
 * `flotilla simulate -f policy.yaml`: the Simulation a (Cluster)PropagationPolicy stands for, the
 * binding its first resource selector would get, with `--replicas` replicas, scheduled against
 * the current clusters with those `--fail` names as failed (Ready False and the not-ready taints
 * the cluster controller puts on a failed member).
 */

export const SIMULATION_API_VERSION = "scheduling.flotilla.io/v1alpha1";
export const SIMULATIONS_PATH = "/apis/scheduling.flotilla.io/v1alpha1/simulations";
const NOT_READY = "cluster.karmada.io/not-ready";

export class SimulateError extends Error {
  override readonly name = "SimulateError";
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

export interface SimulateOptions {
  replicas?: number;
  /** Clusters to simulate as failed. */
  fail?: readonly string[];
  /** The current clusters: needed with `fail`. */
  clusters?: readonly Cluster[];
  /** The namespace of a policy without one. */
  namespace: string;
}

/** The policy's Simulation request; `file` names the policy's file in errors. */
export function policySimulation(policy: unknown, file: string, o: SimulateOptions): Obj {
  if (!isObj(policy)) throw new SimulateError(`${file}: expected a PropagationPolicy or ClusterPropagationPolicy object`);
  const kind = policy.kind;
  if (kind !== "PropagationPolicy" && kind !== "ClusterPropagationPolicy") throw new SimulateError(`${file}: kind ${JSON.stringify(kind)} cannot be simulated: expected PropagationPolicy or ClusterPropagationPolicy`);
  const spec = isObj(policy.spec) ? policy.spec : undefined;
  const meta = isObj(policy.metadata) ? policy.metadata : {};
  const name = typeof meta.name === "string" ? meta.name : "";
  if (!spec || !isObj(spec.placement)) throw new SimulateError(`${file}: ${kind} ${name}: spec.placement is required`);
  const selectors = Array.isArray(spec.resourceSelectors) ? spec.resourceSelectors : [];
  const sel = selectors[0];
  if (!isObj(sel) || typeof sel.apiVersion !== "string" || typeof sel.kind !== "string") throw new SimulateError(`${file}: ${kind} ${name}: spec.resourceSelectors[0] needs apiVersion and kind`);
  if (o.replicas !== undefined && (!Number.isInteger(o.replicas) || o.replicas < 0)) throw new SimulateError(`--replicas must be a whole number >= 0, not ${o.replicas}`);
  const namespaced = kind === "PropagationPolicy";
  const namespace = namespaced ? (typeof meta.namespace === "string" && meta.namespace ? meta.namespace : o.namespace) : typeof sel.namespace === "string" ? sel.namespace : undefined;
  const resName = typeof sel.name === "string" && sel.name ? sel.name : "simulated";
  const resource = { apiVersion: sel.apiVersion, kind: sel.kind, name: resName, ...(namespace ? { namespace } : {}) };
  const binding = {
    apiVersion: "work.karmada.io/v1alpha2",
    kind: namespaced ? "ResourceBinding" : "ClusterResourceBinding",
    metadata: { name: bindingName(sel.kind, resName), ...(namespaced ? { namespace } : {}) },
    spec: { resource, replicas: o.replicas ?? 1, placement: spec.placement },
  };
  const simulation: Obj = { apiVersion: SIMULATION_API_VERSION, kind: "Simulation", metadata: { name: `simulate-${name || "policy"}` }, spec: { binding } };
  const fail = o.fail ?? [];
  if (fail.length) {
    const clusters = o.clusters ?? [];
    const names = new Set(clusters.map((c) => c.metadata.name));
    const unknown = fail.filter((f) => !names.has(f));
    if (unknown.length) throw new SimulateError(`--fail names clusters that do not exist: ${unknown.join(", ")}`);
    (simulation.spec as Obj).clusters = clusters.map((c) => (fail.includes(c.metadata.name ?? "") ? failed(c) : c));
  }
  return simulation;
}

/** The cluster as the control plane sees a member that went down. */
export function failed(c: Cluster): Cluster {
  const taints = (c.spec?.taints ?? []).filter((t) => t.key !== NOT_READY);
  const conditions = (c.status?.conditions ?? []).filter((x) => x.type !== "Ready");
  return {
    ...c,
    spec: { ...c.spec, taints: [...taints, { key: NOT_READY, effect: "NoSchedule" }, { key: NOT_READY, effect: "NoExecute" }] },
    status: { ...c.status, conditions: [...conditions, { type: "Ready", status: "False", reason: "ClusterNotReachable", message: "simulated failure", lastTransitionTime: "1970-01-01T00:00:00Z" }] },
  } as Cluster;
}

/** `member1,member2` as names. */
export const parseNames = (s: string | undefined): string[] => (s ?? "").split(",").map((x) => x.trim()).filter(Boolean);
