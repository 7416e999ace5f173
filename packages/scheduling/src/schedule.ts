import type { AnyResourceBinding, Cluster, TargetCluster } from "@flotilla/api";
import { assignReplicas } from "./assign.js";
import { FitError, SchedulingError, wrapError, type ErrorKind } from "./errors.js";
import { allocatableReplicas, assumedReplicas, compileRequest, type AssumedLoad } from "./estimator.js";
import { hasReplicas, rescheduleRequired, startAffinityIndex } from "./placement.js";
import { buildContext, buildFramework, runFilters, runScores, type Framework, type PluginReason, type PluginTimings } from "./framework.js";
import { inTreeRegistry } from "./registry.js";
import { selectClusters, sortCandidates, type Candidate } from "./select.js";
import type { Registry, SchedulingContext } from "./types.js";
import { uidTieBreaker } from "./webster.js";

/** Everything one scheduling decision depends on. */
export interface ScheduleInput {
  binding: AnyResourceBinding;
  /**
   * The cluster snapshot, deleting clusters included (they count in "0/N clusters"). Cluster
   * objects are treated as immutable: derived data is cached per object (see `clusterFacts`).
   */
  clusters: readonly Cluster[];
  /** Per-cluster available replicas from an external estimator; negative means "no answer". */
  estimates?: ReadonlyMap<string, number>;
  /** Per-cluster load assigned but not yet reported by the member, taken off every estimate. */
  assumed?: ReadonlyMap<string, AssumedLoad>;
  /** Plugin selection, e.g. `"*"` (default) or `"*,-ClusterLocality"`. */
  enabled?: string;
  /** Plugins to choose from; default the in-tree registry. */
  registry?: Registry;
  /** Score weight per plugin name (default 1). */
  weights?: Readonly<Record<string, number>>;
  /** Use the general estimator on `resourceSummary` (default true). */
  generalEstimator?: boolean;
  /** Measure time spent in each plugin (costs a little). */
  timings?: boolean;
}

/** How one feasible cluster fared in scoring and selection. */
export interface ClusterEvaluation {
  name: string;
  /** Sum of the weighted plugin scores. */
  score: number;
  /** Weighted score per score plugin. */
  plugins: Record<string, number>;
  /** Replicas the estimators say the cluster can still take. */
  allocatableReplicas: number;
  /** `allocatableReplicas` plus the replicas the binding already has there. */
  availableReplicas: number;
  /** Replicas of this binding's size that the assumed load took off the estimate (absent when none). */
  assumedReplicas?: number;
  /** With overflow terms in play: 0 for the primary term, i for the i-th overflow term; otherwise 0. */
  overflowOrder: number;
  /** Chosen by the spread-constraint selection (it may still end with 0 replicas). */
  selected: boolean;
}

/** One try of a `clusterAffinities` term. */
export interface AffinityAttempt {
  affinityName: string;
  /** Why the term failed; absent for the term that won. */
  error?: string;
}

export type ScheduledReason = "Success" | "NoClusterFit" | "Unschedulable" | "SchedulerError";

/** The `Scheduled` condition to write to the binding's status. */
export interface ScheduledCondition {
  type: "Scheduled";
  status: "True" | "False";
  reason: ScheduledReason;
  message: string;
}

/** What went wrong and how the caller should retry. */
export interface ScheduleFailure {
  kind: ErrorKind;
  message: string;
  /**
   * `none`: wait for a change (NoClusterFit); `unschedulable`: park in the unschedulable queue;
   * `backoff`: retry with backoff.
   */
  requeue: "none" | "backoff" | "unschedulable";
}

export interface ScheduleResult {
  /** The new `spec.clusters`, sorted by name; empty on failure. */
  clusters: TargetCluster[];
  /** Whether to write `clusters` (and the applied-placement annotation): on success, and on NoClusterFit (clearing it). */
  patchClusters: boolean;
  /** The `clusterAffinities` term that won, or the observed one kept when all failed; absent without an affinity list. */
  affinityName?: string;
  /** Filter objections per rejected cluster. */
  diagnosis: Record<string, PluginReason[]>;
  /** Feasible clusters in selection order (overflowOrder ↑, score ↓, available ↓, name ↑). */
  scores: ClusterEvaluation[];
  /** The `clusterAffinities` terms tried, in order. */
  attempts?: AffinityAttempt[];
  condition: ScheduledCondition;
  error?: ScheduleFailure;
  /** Milliseconds per plugin, when `timings` was asked for. */
  timings?: Record<string, number>;
}

export const SUCCESSFUL_SCHEDULING_MESSAGE = "Binding has been scheduled successfully.";

interface Attempt {
  clusters: TargetCluster[];
  diagnosis: Record<string, PluginReason[]>;
  scores: ClusterEvaluation[];
  error?: SchedulingError;
}

function byName(a: TargetCluster, b: TargetCluster): number {
  const x = a.name ?? "";
  const y = b.name ?? "";
  return x < y ? -1 : x > y ? 1 : 0;
}

function overflowOrder(ctx: SchedulingContext, c: Cluster): number {
  for (const t of ctx.affinities) if (t.matches(c)) return t.order;
  return 1000;
}

/** A candidate that remembers its position among the feasible clusters. */
interface IndexedCandidate extends Candidate {
  readonly index: number;
}

function evaluations(candidates: readonly IndexedCandidate[], plugins: ReadonlyArray<Record<string, number>>, selected: readonly Candidate[] | undefined, assumed: readonly number[] | undefined): ClusterEvaluation[] {
  const chosen = new Uint8Array(candidates.length);
  if (selected) for (const c of selected) chosen[(c as IndexedCandidate).index] = 1;
  const out = new Array<ClusterEvaluation>(candidates.length);
  for (let i = 0; i < candidates.length; i++) {
    const c = candidates[i];
    out[i] = {
      name: c.name,
      score: c.score,
      plugins: plugins[c.index],
      allocatableReplicas: c.allocatable,
      availableReplicas: c.available,
      overflowOrder: c.overflowOrder,
      selected: chosen[c.index] === 1,
    };
    const a = assumed?.[c.index];
    if (a) out[i].assumedReplicas = a;
  }
  return out;
}

/** One pass of filter → score → estimate → select → assign for a fixed affinity. */
function attempt(fw: Framework, ctx: SchedulingContext, input: ScheduleInput, timings: PluginTimings | undefined): Attempt {
  const filtered = runFilters(fw, ctx, input.clusters, timings);
  const { feasible, diagnosis } = filtered;
  if (feasible.length === 0) return { clusters: [], diagnosis, scores: [], error: new FitError(filtered.total, filtered.fitReasons) };

  let candidates: IndexedCandidate[] = [];
  let plugins: ReadonlyArray<Record<string, number>> = [];
  let selected: Candidate[] | undefined;
  let assumed: number[] | undefined;
  try {
    const scored = runScores(fw, ctx, feasible, timings);
    plugins = scored.byPlugin;
    const allocatable = allocatableReplicas(feasible, ctx.spec, { estimates: input.estimates, general: input.generalEstimator, assumed: input.assumed }, filtered.feasibleFacts);
    if (input.assumed?.size && hasReplicas(ctx.spec)) {
      const request = ctx.spec.replicaRequirements ? compileRequest(ctx.spec.replicaRequirements.resourceRequest) : undefined;
      assumed = feasible.map((c) => assumedReplicas(input.assumed!.get(c.metadata.name ?? ""), request));
    }
    const overflow = ctx.affinities.length > 1;
    const built = new Array<IndexedCandidate>(feasible.length);
    for (let i = 0; i < feasible.length; i++) {
      const cluster = feasible[i];
      const name = cluster.metadata.name ?? "";
      const assigned = ctx.scheduled.size === 0 ? 0 : (ctx.scheduled.get(name) ?? 0);
      built[i] = {
        cluster,
        name,
        score: scored.total[i],
        allocatable: allocatable[i],
        available: allocatable[i] + assigned,
        overflowOrder: overflow ? overflowOrder(ctx, cluster) : 0,
        index: i,
      };
    }
    candidates = sortCandidates(built);

    try {
      selected = selectClusters(candidates, ctx.placement, ctx.spec);
    } catch (e) {
      throw wrapError("failed to select clusters", e);
    }

    let assigned: TargetCluster[];
    try {
      assigned = assignReplicas(selected, ctx, {
        tieBreaker: uidTieBreaker(ctx.spec.resource?.uid),
        fresh: rescheduleRequired(ctx.spec, ctx.binding.status),
      });
    } catch (e) {
      throw wrapError("failed to assign replicas", e);
    }
    return { clusters: assigned.sort(byName), diagnosis, scores: evaluations(candidates, plugins, selected, assumed) };
  } catch (e) {
    const error = e instanceof SchedulingError ? e : wrapError("scheduling failed", e);
    return { clusters: [], diagnosis, scores: evaluations(candidates, plugins, selected, assumed), error };
  }
}

function success(a: Attempt): Pick<ScheduleResult, "clusters" | "patchClusters" | "condition"> {
  return {
    clusters: a.clusters,
    patchClusters: true,
    condition: { type: "Scheduled", status: "True", reason: "Success", message: SUCCESSFUL_SCHEDULING_MESSAGE },
  };
}

/**
 * Maps a failure to the condition and retry behaviour (Karmada's getConditionByError).
 * `aggregate` marks the affinity-list case, where a FitError is retried rather than parked.
 */
function failure(error: SchedulingError, aggregate: boolean): Pick<ScheduleResult, "clusters" | "patchClusters" | "condition" | "error"> {
  const message = error.message;
  switch (error.kind) {
    case "FitError":
      return {
        clusters: [],
        patchClusters: true,
        condition: { type: "Scheduled", status: "False", reason: "NoClusterFit", message },
        error: { kind: "FitError", message, requeue: aggregate ? "backoff" : "none" },
      };
    case "Unschedulable":
      return {
        clusters: [],
        patchClusters: false,
        condition: { type: "Scheduled", status: "False", reason: "Unschedulable", message },
        error: { kind: "Unschedulable", message, requeue: "unschedulable" },
      };
    default:
      return {
        clusters: [],
        patchClusters: false,
        condition: { type: "Scheduled", status: "False", reason: "SchedulerError", message },
        error: { kind: "SchedulerError", message, requeue: "backoff" },
      };
  }
}

/**
 * Schedules one binding onto the cluster snapshot. Pure and synchronous: the same input always
 * gives the same result. With an ordered `clusterAffinities` list, terms are tried from the
 * observed one (or the first) onward until one succeeds; if all fail, the first error stands
 * and the observed term name is kept.
 */
export function schedule(input: ScheduleInput): ScheduleResult {
  const fw = buildFramework(input.registry ?? inTreeRegistry, input.enabled ?? "*", input.weights);
  const timings: PluginTimings | undefined = input.timings ? new Map() : undefined;
  const { binding } = input;
  const placement = binding.spec?.placement ?? {};
  const terms = placement.clusterAffinities;
  if (placement.clusterAffinity || !terms?.length) {
    const a = attempt(fw, buildContext(binding, undefined), input, timings);
    const outcome = a.error ? failure(a.error, false) : success(a);
    return withTimings({ ...outcome, diagnosis: a.diagnosis, scores: a.scores }, timings);
  }

  const attempts: AffinityAttempt[] = [];
  let first: Attempt | undefined;
  for (let i = startAffinityIndex(binding); i < terms.length; i++) {
    const name = terms[i].affinityName ?? "";
    const a = attempt(fw, buildContext(binding, name), input, timings);
    if (!a.error) {
      attempts.push({ affinityName: name });
      return withTimings({ ...success(a), affinityName: name, diagnosis: a.diagnosis, scores: a.scores, attempts }, timings);
    }
    attempts.push({ affinityName: name, error: a.error.message });
    first ??= a;
  }
  const kept = binding.status?.schedulerObservingAffinityName;
  return withTimings({
    ...failure(first!.error!, first!.error!.kind === "FitError"),
    ...(kept !== undefined ? { affinityName: kept } : {}),
    diagnosis: first!.diagnosis,
    scores: first!.scores,
    attempts,
  }, timings);
}

function withTimings(r: ScheduleResult, timings: PluginTimings | undefined): ScheduleResult {
  if (timings) r.timings = Object.fromEntries(timings);
  return r;
}
