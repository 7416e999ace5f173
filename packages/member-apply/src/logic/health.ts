import type { KubeObject } from "@flotilla/api";

/** Karmada's ResourceHealth values. */
export type Health = "Healthy" | "Unhealthy" | "Unknown";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const num = (v: unknown, def = 0): number => (typeof v === "number" && Number.isFinite(v) ? v : def);
const groupOf = (apiVersion: string) => (apiVersion.includes("/") ? apiVersion.slice(0, apiVersion.lastIndexOf("/")) : "");

function status(o: KubeObject): Obj {
  return isObj(o.status) ? o.status : {};
}

function spec(o: KubeObject): Obj {
  return isObj(o.spec) ? o.spec : {};
}

/** Whether the controller has seen the current spec (observedGeneration ≥ generation). */
function observedCurrent(o: KubeObject): boolean {
  const gen = num(o.metadata.generation, 0);
  return num(status(o).observedGeneration, 0) >= gen;
}

/** Deployment / StatefulSet: ready and updated replicas equal the desired replicas at the current generation. */
function workloadHealthy(o: KubeObject): boolean {
  const want = num(spec(o).replicas, 1);
  const s = status(o);
  return observedCurrent(o) && num(s.updatedReplicas) === want && num(s.readyReplicas) === want;
}

function loadBalancerReady(o: KubeObject): boolean {
  const lb = status(o).loadBalancer;
  return isObj(lb) && Array.isArray(lb.ingress) && lb.ingress.length > 0;
}

type Interpreter = (o: KubeObject) => boolean;

/** The default interpreter's InterpretHealth hooks, by group/Kind. */
const HEALTH: Record<string, Interpreter> = {
  "apps/Deployment": workloadHealthy,
  "apps/StatefulSet": workloadHealthy,
  "apps/ReplicaSet": (o) => observedCurrent(o) && num(status(o).availableReplicas) === num(spec(o).replicas, 1),
  "apps/DaemonSet": (o) => {
    const s = status(o);
    return observedCurrent(o) && num(s.updatedNumberScheduled) === num(s.desiredNumberScheduled) && num(s.numberAvailable) === num(s.desiredNumberScheduled);
  },
  "/Service": (o) => (spec(o).type === "LoadBalancer" ? loadBalancerReady(o) : true),
  "networking.k8s.io/Ingress": loadBalancerReady,
  "/PersistentVolumeClaim": (o) => status(o).phase === "Bound",
  "/Pod": (o) => {
    const s = status(o);
    if (s.phase === "Succeeded") return true;
    const conds = Array.isArray(s.conditions) ? s.conditions : [];
    return s.phase === "Running" && conds.some((c) => isObj(c) && c.type === "Ready" && c.status === "True");
  },
  "policy/PodDisruptionBudget": (o) => num(status(o).currentHealthy) >= num(status(o).desiredHealthy),
  "batch/Job": (o) => {
    const conds = Array.isArray(status(o).conditions) ? (status(o).conditions as unknown[]) : [];
    return !conds.some((c) => isObj(c) && c.type === "Failed" && c.status === "True");
  },
};

/**
 * The health of a member object (Karmada's work-status controller): kinds with an
 * InterpretHealth hook get its verdict, every other kind is Healthy. A hook that cannot
 * interpret the object (no status yet is still interpretable) gives Unknown.
 */
export function interpretHealth(o: KubeObject | undefined): Health {
  if (!o) return "Unknown";
  const hook = HEALTH[`${groupOf(o.apiVersion)}/${o.kind}`];
  if (!hook) return "Healthy";
  try {
    return hook(o) ? "Healthy" : "Unhealthy";
  } catch {
    return "Unknown";
  }
}

const WORKLOAD_FIELDS = ["replicas", "updatedReplicas", "readyReplicas", "availableReplicas", "unavailableReplicas"] as const;

/**
 * The status reflected into the Work (the default interpreter's ReflectStatus): for
 * Deployments and StatefulSets the replica counters plus `observedGeneration`, `generation`
 * and the template generation the member object was made from; for Services and Ingresses
 * the load balancer; for every other kind the whole status. Undefined when there is none.
 */
export function reflectStatus(o: KubeObject | undefined, templateGenerationAnnotation = "resourcetemplate.karmada.io/generation"): Record<string, unknown> | undefined {
  if (!o) return undefined;
  const gk = `${groupOf(o.apiVersion)}/${o.kind}`;
  const s = status(o);
  if (gk === "apps/Deployment" || gk === "apps/StatefulSet" || gk === "apps/DaemonSet" || gk === "apps/ReplicaSet") {
    const out: Record<string, unknown> = {};
    if (gk === "apps/DaemonSet") {
      for (const k of ["currentNumberScheduled", "desiredNumberScheduled", "numberAvailable", "numberMisscheduled", "numberReady", "updatedNumberScheduled", "numberUnavailable"]) if (s[k] !== undefined) out[k] = s[k];
    } else {
      for (const k of WORKLOAD_FIELDS) if (s[k] !== undefined) out[k] = s[k];
    }
    if (s.observedGeneration !== undefined) out.observedGeneration = s.observedGeneration;
    if (o.metadata.generation !== undefined) out.generation = o.metadata.generation;
    const tg = o.metadata.annotations?.[templateGenerationAnnotation];
    if (tg !== undefined && /^\d+$/.test(tg)) out.resourceTemplateGeneration = Number(tg);
    return out;
  }
  if (gk === "/Service" || gk === "networking.k8s.io/Ingress") {
    return isObj(s.loadBalancer) ? { loadBalancer: s.loadBalancer } : undefined;
  }
  return Object.keys(s).length ? s : undefined;
}
