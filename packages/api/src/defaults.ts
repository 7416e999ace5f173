import type {
  ApplicationFailoverBehaviorJson,
  ClusterFailoverBehaviorJson,
  PlacementJson,
  PropagationSpecJson,
  TolerationJson,
} from "@flotilla/proto";
import {
  ClusterPropagationPolicyPermanentIDLabel,
  ClusterResourceBindingPermanentIDLabel,
  DefaultSchedulerName,
  PropagationPolicyPermanentIDLabel,
  ResourceBindingPermanentIDLabel,
  TaintClusterNotReady,
  TaintClusterUnreachable,
  WorkPermanentIDLabel,
} from "./names.js";
import { KARMADA, parseApiVersion } from "./resources.js";
import type { Cluster, KubeObject, ObjectMeta } from "./types.js";
import { rfc3339 } from "./time.js";
import { defaultResourceModels, standardizeResourceModels } from "./resource-models.js";

/** Settings for defaulting; everything that would make it impure is passed in. */
export interface DefaultsOptions {
  /** Stamped on NoExecute cluster taints that lack `timeAdded`. */
  now: Date;
  /** Generates permanent ids (a UUID in production). */
  uuid: () => string;
  /**
   * `tolerationSeconds` of the default `cluster.karmada.io/not-ready:NoExecute` toleration added to
   * (Cluster)PropagationPolicies (Karmada's `--default-not-ready-toleration-seconds`, 300). `null` adds none.
   */
  notReadyTolerationSeconds?: number | null;
  /** Same for `cluster.karmada.io/unreachable:NoExecute` (`--default-unreachable-toleration-seconds`, 300). */
  unreachableTolerationSeconds?: number | null;
  /**
   * Give a Cluster without `spec.resourceModels` upstream's nine default grades (the
   * CustomizedClusterResourceModeling gate; the gateway's CLUSTER_RESOURCE_MODELING_DEFAULTS).
   * Upstream defaults on create only, so the gateway sets this for creates alone.
   */
  defaultClusterResourceModels?: boolean;
}

export const DEFAULT_NOT_READY_TOLERATION_SECONDS = 300;
export const DEFAULT_UNREACHABLE_TOLERATION_SECONDS = 300;
/** CRD default of `failover.application.decisionConditions.tolerationSeconds`. */
export const DEFAULT_APPLICATION_FAILOVER_TOLERATION_SECONDS = 300;
/** Webhook default of `failover.application.gracePeriodSeconds` when purgeMode is Gracefully. */
export const DEFAULT_APPLICATION_FAILOVER_GRACE_PERIOD_SECONDS = 600;

function withLabel(meta: ObjectMeta, key: string, uuid: () => string): void {
  if (!meta.labels?.[key]) meta.labels = { ...meta.labels, [key]: uuid() };
}

/**
 * The default NoExecute tolerations, added unless the placement already has a toleration with the same
 * key, effect, operator and value (Karmada's `helper.AddTolerations`, which uses core/v1
 * `Toleration.MatchToleration`). So a user's `{key: not-ready, operator: Exists, effect: NoExecute,
 * tolerationSeconds: 600}` replaces the default, while a catch-all `{operator: Exists}` (empty key) or an
 * `Equal` toleration for the same key does not: the default is still appended.
 */
export function addDefaultTolerations(placement: PlacementJson, tolerations: TolerationJson[]): void {
  for (const t of tolerations) {
    const exists = (placement.clusterTolerations ?? []).some(
      (c) =>
        (c.key ?? "") === (t.key ?? "") &&
        (c.effect ?? "") === (t.effect ?? "") &&
        (c.operator ?? "") === (t.operator ?? "") &&
        (c.value ?? "") === (t.value ?? ""),
    );
    if (!exists) placement.clusterTolerations = [...(placement.clusterTolerations ?? []), t];
  }
}

/** Legacy purge-mode spellings (Karmada before v1.13) mapped onto the current ones. */
const LEGACY_PURGE_MODES: Record<string, string> = { Immediately: "Directly", Graciously: "Gracefully" };

function defaultApplicationFailover(app: ApplicationFailoverBehaviorJson): void {
  app.decisionConditions ??= {};
  app.decisionConditions.tolerationSeconds ??= DEFAULT_APPLICATION_FAILOVER_TOLERATION_SECONDS;
  app.purgeMode = LEGACY_PURGE_MODES[app.purgeMode ?? ""] ?? (app.purgeMode || "Gracefully");
  if (app.purgeMode === "Gracefully") app.gracePeriodSeconds ??= DEFAULT_APPLICATION_FAILOVER_GRACE_PERIOD_SECONDS;
}

function defaultClusterFailover(c: ClusterFailoverBehaviorJson): void {
  c.purgeMode = LEGACY_PURGE_MODES[c.purgeMode ?? ""] ?? (c.purgeMode || "Gracefully");
}

/** Placement defaults shared by both policy kinds (mutates `placement`). */
export function defaultPlacement(placement: PlacementJson, opts: Pick<DefaultsOptions, "notReadyTolerationSeconds" | "unreachableTolerationSeconds">): void {
  // helper.SetDefaultSpreadConstraints: maxGroups is deliberately not defaulted.
  for (const sc of placement.spreadConstraints ?? []) {
    if (!sc.spreadByField && !sc.spreadByLabel) sc.spreadByField = "cluster";
    if (!sc.minGroups) sc.minGroups = 1;
  }
  const defaults: TolerationJson[] = [];
  const notReady = opts.notReadyTolerationSeconds === undefined ? DEFAULT_NOT_READY_TOLERATION_SECONDS : opts.notReadyTolerationSeconds;
  const unreachable = opts.unreachableTolerationSeconds === undefined ? DEFAULT_UNREACHABLE_TOLERATION_SECONDS : opts.unreachableTolerationSeconds;
  if (notReady !== null) defaults.push({ key: TaintClusterNotReady, operator: "Exists", effect: "NoExecute", tolerationSeconds: notReady });
  if (unreachable !== null) defaults.push({ key: TaintClusterUnreachable, operator: "Exists", effect: "NoExecute", tolerationSeconds: unreachable });
  addDefaultTolerations(placement, defaults);
  const rs = placement.replicaScheduling;
  if (rs) {
    // CRD default of replicaSchedulingType, then helper.SetReplicaDivisionPreferenceWeighted.
    rs.replicaSchedulingType ||= "Divided";
    if (rs.replicaSchedulingType === "Divided" && !rs.replicaDivisionPreference) rs.replicaDivisionPreference = "Weighted";
  }
}

/** Spec defaults of a (Cluster)PropagationPolicy (mutates `spec`); `namespace` is the PP's, "" for a CPP. */
export function defaultPropagationSpec(spec: PropagationSpecJson, namespace: string, opts: DefaultsOptions): void {
  if (namespace) {
    for (const rs of spec.resourceSelectors ?? []) if (!rs.namespace) rs.namespace = namespace;
  }
  spec.placement ??= {};
  defaultPlacement(spec.placement, opts);
  // helper.ContainsServiceImport: a ServiceImport is useless without its dependencies.
  if ((spec.resourceSelectors ?? []).some((rs) => rs.kind === "ServiceImport" && parseApiVersion(rs.apiVersion ?? "").group === "multicluster.x-k8s.io")) {
    spec.propagateDeps = true;
  }
  if (spec.failover?.application) defaultApplicationFailover(spec.failover.application);
  if (spec.failover?.cluster) defaultClusterFailover(spec.failover.cluster);
  // CRD (+kubebuilder:default) values.
  spec.priority ??= 0;
  spec.preemption ||= "Never";
  spec.conflictResolution ||= "Abort";
  spec.schedulerName ||= DefaultSchedulerName;
}

const clone = <T>(o: T): T => structuredClone(o);
const karmadaGroupOfKind = new Map<string, string>(Object.values(KARMADA).map((r) => [r.kind, r.group]));

/**
 * Applies what Karmada's mutating webhooks and CRD defaults would, for one object, returning a new object
 * (the input is not modified). Kinds without defaults are returned as a copy.
 *
 * - (Cluster)PropagationPolicy: resourceSelectors[].namespace ← the PP's namespace; spread constraints
 *   (field `cluster` when neither field nor label is set, minGroups 0 → 1); the not-ready/unreachable
 *   NoExecute tolerations; replicaSchedulingType "" → Divided and Divided's division preference "" → Weighted;
 *   propagateDeps for ServiceImport selectors; failover.application (decisionConditions.tolerationSeconds 300,
 *   purgeMode Gracefully, gracePeriodSeconds 600 when Gracefully) and failover.cluster (purgeMode Gracefully),
 *   with the legacy spellings Immediately/Graciously rewritten to Directly/Gracefully; priority 0,
 *   preemption Never, conflictResolution Abort, schedulerName default-scheduler; the permanent-id label.
 * - (Cluster)ResourceBinding, Work: the permanent-id label when missing.
 * - Cluster: legacy `spec.zone` moved to `spec.zones` when zones is empty; `timeAdded = now` on NoExecute
 *   taints without one; `spec.resourceModels` standardized (sorted by grade, the first grade's
 *   minimums 0, the last grade's maximums MaxInt64), or the default grades when there are none
 *   and `defaultClusterResourceModels` is set.

 * - ClusterTaintPolicy: nothing (upstream has no mutating webhook or CRD default for it).
 */
export function applyDefaults<T extends KubeObject>(obj: T, opts: DefaultsOptions): T {
  const o = clone(obj);
  // An object built in code may lack apiVersion; Karmada's kinds are still recognised by kind.
  const group = o.apiVersion ? parseApiVersion(o.apiVersion).group : (karmadaGroupOfKind.get(o.kind) ?? "");
  o.metadata ??= {};
  switch (`${group}/${o.kind}`) {
    case "policy.karmada.io/PropagationPolicy":
      o.spec ??= {};
      defaultPropagationSpec(o.spec as PropagationSpecJson, o.metadata.namespace ?? "", opts);
      withLabel(o.metadata, PropagationPolicyPermanentIDLabel, opts.uuid);
      break;
    case "policy.karmada.io/ClusterPropagationPolicy":
      o.spec ??= {};
      defaultPropagationSpec(o.spec as PropagationSpecJson, "", opts);
      withLabel(o.metadata, ClusterPropagationPolicyPermanentIDLabel, opts.uuid);
      break;
    case "policy.karmada.io/OverridePolicy":
      // the OverridePolicy mutating webhook: selectors name the policy's namespace
      for (const rs of (o.spec?.resourceSelectors ?? []) as { namespace?: string }[]) if (!rs.namespace) rs.namespace = o.metadata.namespace ?? "";
      break;
    case "work.karmada.io/ResourceBinding":
      withLabel(o.metadata, ResourceBindingPermanentIDLabel, opts.uuid);
      break;
    case "work.karmada.io/ClusterResourceBinding":
      withLabel(o.metadata, ClusterResourceBindingPermanentIDLabel, opts.uuid);
      break;
    case "work.karmada.io/Work":
      withLabel(o.metadata, WorkPermanentIDLabel, opts.uuid);
      break;
    case "cluster.karmada.io/Cluster":
      defaultCluster(o as unknown as Cluster, opts.now, { defaultResourceModels: opts.defaultClusterResourceModels });
      break;
  }
  return o;
}

/**
 * Cluster defaults (mutates `cluster`): mutation.MutateCluster, and the Cluster strategy's
 * resource models (StandardizeClusterResourceModels; SetDefaultClusterResourceModels when
 * `o.defaultResourceModels` and the Cluster has none). Upstream does both only behind the
 * CustomizedClusterResourceModeling gate; Flotilla always standardizes (so validation sees the
 * models in grade order) and defaults only when asked.
 */
export function defaultCluster(cluster: Cluster, now: Date, o: { defaultResourceModels?: boolean } = {}): void {
  if (o.defaultResourceModels && !cluster.spec?.resourceModels?.length) cluster.spec = { ...cluster.spec, resourceModels: defaultResourceModels() };
  const spec = cluster.spec;
  if (!spec) return;
  if (spec.resourceModels?.length) standardizeResourceModels(spec.resourceModels);
  if (spec.zone && !spec.zones?.length) {
    spec.zones = [spec.zone];
    delete spec.zone;
  }
  for (const t of spec.taints ?? []) {
    if (t.effect === "NoExecute" && !t.timeAdded) t.timeAdded = rfc3339(now);
  }
}
