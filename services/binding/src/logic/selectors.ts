import { matchesSelector, type AnyPropagationPolicy, type KubeObject, type ResourceSelector } from "@flotilla/api";

/** How specifically a selector picks a template (util.ImplicitPriority). */
export const ImplicitPriority = {
  MisMatch: 0,
  /** apiVersion + kind (+ namespace) only. */
  MatchAll: 1,
  MatchLabelSelector: 2,
  MatchName: 3,
} as const;

type Template = Pick<KubeObject, "apiVersion" | "kind" | "metadata">;

/**
 * `util.ResourceSelectorPriority`: apiVersion and kind must be equal and the namespace too
 * when the selector sets one; then a name decides alone (the label selector is ignored),
 * else a label selector must match, else everything of the kind matches.
 */
export function selectorPriority(t: Template, rs: ResourceSelector): number {
  if ((rs.apiVersion ?? "") !== t.apiVersion || (rs.kind ?? "") !== t.kind) return ImplicitPriority.MisMatch;
  if (rs.namespace && rs.namespace !== (t.metadata.namespace ?? "")) return ImplicitPriority.MisMatch;
  if (rs.name) return rs.name === t.metadata.name ? ImplicitPriority.MatchName : ImplicitPriority.MisMatch;
  if (rs.labelSelector) return matchesSelector(t.metadata.labels, rs.labelSelector) ? ImplicitPriority.MatchLabelSelector : ImplicitPriority.MisMatch;
  return ImplicitPriority.MatchAll;
}

/** The best priority over a policy's selectors (util.ResourceMatchSelectorsPriority). */
export function selectorsPriority(t: Template, selectors: readonly ResourceSelector[] | undefined): number {
  let best: number = ImplicitPriority.MisMatch;
  for (const rs of selectors ?? []) best = Math.max(best, selectorPriority(t, rs));
  return best;
}

/** Whether any selector picks the template (util.ResourceMatchSelectors). */
export function matchesAnySelector(t: Template, selectors: readonly ResourceSelector[] | undefined): boolean {
  return selectorsPriority(t, selectors) > ImplicitPriority.MisMatch;
}

export interface RankedPolicy<P> {
  policy: P;
  explicit: number;
  implicit: number;
}

const byteCompare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Precedence among policies of one scope: explicit priority desc, implicit desc, then the smaller name. */
export function comparePolicies<P extends AnyPropagationPolicy>(a: RankedPolicy<P>, b: RankedPolicy<P>): number {
  if (a.explicit !== b.explicit) return b.explicit - a.explicit;
  if (a.implicit !== b.implicit) return b.implicit - a.implicit;
  return byteCompare(a.policy.metadata.name ?? "", b.policy.metadata.name ?? "");
}

/**
 * The policy that claims an unclaimed template among policies of one scope (all PPs of the
 * template's namespace, or all CPPs): policies being deleted and policies none of whose
 * selectors match are out; the rest are ranked by `comparePolicies`.
 */
export function pickPolicy<P extends AnyPropagationPolicy>(policies: readonly P[], t: Template): P | undefined {
  let best: RankedPolicy<P> | undefined;
  for (const policy of policies) {
    if (policy.metadata.deletionTimestamp) continue;
    const implicit = selectorsPriority(t, policy.spec?.resourceSelectors);
    if (implicit === ImplicitPriority.MisMatch) continue;
    const cand = { policy, explicit: policy.spec?.priority ?? 0, implicit };
    if (!best || comparePolicies(cand, best) < 0) best = cand;
  }
  return best?.policy;
}

/**
 * The policy for a template across both scopes: a PropagationPolicy of the template's own
 * namespace beats any ClusterPropagationPolicy; CPPs are considered only when no PP matches.
 * Cluster-scoped templates can only be claimed by a CPP.
 */
export function pickPolicyForTemplate(t: Template, pps: readonly AnyPropagationPolicy[], cpps: readonly AnyPropagationPolicy[]): AnyPropagationPolicy | undefined {
  const ns = t.metadata.namespace ?? "";
  if (ns) {
    const pp = pickPolicy(
      pps.filter((p) => (p.metadata.namespace ?? "") === ns),
      t,
    );
    if (pp) return pp;
  }
  return pickPolicy(cpps, t);
}
