import {
  type Cluster,
  type ClusterAffinity,
  type LabelSelector,
  type Placement,
  type Requirement,
} from "@flotilla/api";
import { clusterZones } from "./placement.js";
import type { AffinityTier } from "./types.js";

/** A compiled cluster affinity: true when the cluster matches. */
export type ClusterMatcher = (cluster: Cluster) => boolean;

const never: ClusterMatcher = () => false;

const NAME_RE = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const DNS_SUBDOMAIN_RE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** A label key: optional DNS-subdomain prefix and a name of at most 63 characters. */
export function isValidLabelKey(key: string): boolean {
  const slash = key.lastIndexOf("/");
  const name = slash < 0 ? key : key.slice(slash + 1);
  if (slash >= 0) {
    const prefix = key.slice(0, slash);
    if (prefix.length === 0 || prefix.length > 253 || !DNS_SUBDOMAIN_RE.test(prefix)) return false;
  }
  return name.length > 0 && name.length <= 63 && NAME_RE.test(name);
}

/** A label value: empty, or at most 63 characters of the name alphabet. */
export function isValidLabelValue(value: string): boolean {
  return value === "" || (value.length <= 63 && NAME_RE.test(value));
}

/** The structured selector as requirements, or `undefined` when it is malformed. */
export function compileLabelSelector(sel: LabelSelector): Requirement[] | undefined {
  const reqs: Requirement[] = [];
  for (const [key, value] of Object.entries(sel.matchLabels ?? {})) {
    if (!isValidLabelKey(key) || !isValidLabelValue(value)) return undefined;
    reqs.push({ key, operator: "In", values: [value] });
  }
  for (const e of sel.matchExpressions ?? []) {
    const key = e.key ?? "";
    const values = e.values ?? [];
    if (!isValidLabelKey(key)) return undefined;
    switch (e.operator) {
      case "In":
      case "NotIn":
        if (values.length === 0 || !values.every(isValidLabelValue)) return undefined;
        break;
      case "Exists":
      case "DoesNotExist":
        if (values.length !== 0) return undefined;
        break;
      default:
        return undefined;
    }
    reqs.push({ key, operator: e.operator, values });
  }
  return reqs;
}

type FieldTest = (cluster: Cluster) => boolean;

function zoneTest(operator: string | undefined, values: readonly string[]): FieldTest | undefined {
  const set = new Set(values);
  const overlaps = (c: Cluster): boolean => clusterZones(c).some((z) => set.has(z));
  switch (operator) {
    case "In":
      return overlaps;
    case "NotIn":
      return (c) => !overlaps(c);
    case "Exists":
      return (c) => clusterZones(c).length > 0;
    case "DoesNotExist":
      return (c) => clusterZones(c).length === 0;
    default:
      return undefined;
  }
}

const INT_RE = /^[+-]?\d+$/;

/** `provider` / `region` behave like labels on `spec.provider` / `spec.region` (empty = absent). */
function labelLikeTest(field: "provider" | "region", operator: string | undefined, values: readonly string[]): FieldTest | undefined {
  const get = (c: Cluster): string | undefined => c.spec?.[field] || undefined;
  if (!values.every(isValidLabelValue)) return undefined;
  switch (operator) {
    case "In":
    case "NotIn": {
      if (values.length === 0) return undefined;
      const set = new Set(values);
      return operator === "In"
        ? (c) => {
            const v = get(c);
            return v !== undefined && set.has(v);
          }
        : (c) => {
            const v = get(c);
            return v === undefined || !set.has(v);
          };
    }
    case "Exists":
      return values.length === 0 ? (c) => get(c) !== undefined : undefined;
    case "DoesNotExist":
      return values.length === 0 ? (c) => get(c) === undefined : undefined;
    case "Gt":
    case "Lt": {
      if (values.length !== 1 || !INT_RE.test(values[0]!)) return undefined;
      const bound = BigInt(values[0]!);
      return (c) => {
        const v = get(c);
        if (v === undefined || !INT_RE.test(v)) return false;
        return operator === "Gt" ? BigInt(v) > bound : BigInt(v) < bound;
      };
    }
    default:
      return undefined;
  }
}

/**
 * Compiles a cluster affinity (Karmada's `ClusterMatches`): `exclude` always wins; the parts
 * present (labelSelector, fieldSelector, clusterNames) are ANDed; an empty affinity matches all.
 * Field keys other than provider/region/zone, or a malformed selector, match nothing.
 */
export function compileAffinity(affinity: ClusterAffinity): ClusterMatcher {
  const exclude = affinity.exclude?.length ? new Set(affinity.exclude) : undefined;
  const names = affinity.clusterNames?.length ? new Set(affinity.clusterNames) : undefined;

  let labelReqs: Requirement[] | undefined;
  if (affinity.labelSelector) {
    labelReqs = compileLabelSelector(affinity.labelSelector);
    if (!labelReqs) return never;
  }

  const fieldTests: FieldTest[] = [];
  for (const e of affinity.fieldSelector?.matchExpressions ?? []) {
    const values = e.values ?? [];
    let t: FieldTest | undefined;
    switch (e.key) {
      case "zone":
        t = zoneTest(e.operator, values);
        break;
      case "provider":
      case "region":
        t = labelLikeTest(e.key, e.operator, values);
        break;
      default:
        t = undefined;
    }
    if (!t) return never;
    fieldTests.push(t);
  }

  const labelTests = labelReqs?.map(compileRequirement);
  return (cluster) => {
    const name = cluster.metadata.name ?? "";
    if (exclude?.has(name)) return false;
    if (labelTests && !matchesLabels(cluster.metadata.labels, labelTests)) return false;
    for (const t of fieldTests) if (!t(cluster)) return false;
    return !names || names.has(name);
  };
}

interface CompiledRequirement {
  readonly key: string;
  readonly operator: Requirement["operator"];
  readonly values: ReadonlySet<string>;
  /** The only value, when there is exactly one (the common `matchLabels` case). */
  readonly single: string | undefined;
}

function compileRequirement(r: Requirement): CompiledRequirement {
  return { key: r.key, operator: r.operator, values: new Set(r.values), single: r.values.length === 1 ? r.values[0] : undefined };
}

function listed(r: CompiledRequirement, v: string): boolean {
  return r.single !== undefined ? r.single === v : r.values.has(v);
}

/**
 * `matchesRequirements` over compiled requirements. Labels are plain JSON objects, so only a
 * string value counts as present (nothing on Object.prototype is a string).
 */
function matchesLabels(labels: Record<string, string> | undefined, reqs: readonly CompiledRequirement[]): boolean {
  for (const r of reqs) {
    const v: unknown = labels?.[r.key];
    const has = typeof v === "string";
    switch (r.operator) {
      case "In":
        if (!has || !listed(r, v)) return false;
        break;
      case "NotIn":
        if (has && listed(r, v)) return false;
        break;
      case "Exists":
        if (!has) return false;
        break;
      case "DoesNotExist":
        if (has) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}

/** One-off form of `compileAffinity`. */
export function clusterMatches(cluster: Cluster, affinity: ClusterAffinity): boolean {
  return compileAffinity(affinity)(cluster);
}

/** The inline affinity of a `clusterAffinities` term or of one of its overflow tiers (without the name). */
function termAffinity(term: ClusterAffinity & { affinityName?: string }): ClusterAffinity {
  const a: ClusterAffinity = {};
  if (term.labelSelector) a.labelSelector = term.labelSelector;
  if (term.fieldSelector) a.fieldSelector = term.fieldSelector;
  if (term.clusterNames) a.clusterNames = term.clusterNames;
  if (term.exclude) a.exclude = term.exclude;
  return a;
}

/**
 * The affinities in force: `clusterAffinity`; or the named `clusterAffinities` term plus, for
 * workloads (Karmada's IsWorkload: replicas or replicaRequirements), its overflow tiers
 * (order 1, 2, …; a cluster in several tiers belongs to the first); or nothing (every cluster
 * matches).
 */
export function resolveAffinities(placement: Placement, affinityName: string | undefined, workload: boolean): AffinityTier[] {
  const single = placement.clusterAffinity;
  if (single) return [{ affinity: single, order: 0, matches: compileAffinity(single) }];
  const term = placement.clusterAffinities?.find((t) => (t.affinityName ?? "") === (affinityName ?? ""));
  if (!term) return [];
  const primary = termAffinity(term);
  const tiers: AffinityTier[] = [{ affinity: primary, order: 0, matches: compileAffinity(primary) }];
  if (workload) {
    term.overflowAffinities?.forEach((o, i) => {
      const a = termAffinity(o);
      tiers.push({ affinity: a, order: i + 1, matches: compileAffinity(a) });
    });
  }
  return tiers;
}
