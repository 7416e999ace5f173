import type { AnyPropagationPolicy, KubeObject } from "@flotilla/api";
import type { Claim } from "./claim.js";
import { comparePolicies, selectorsPriority, ImplicitPriority } from "./selectors.js";

/** The Normal Event on a template a policy took over (events.EventReasonPreemptPolicySucceed). */
export const EventReasonPreemptPolicySucceed = "PreemptPolicySucceed";

const explicit = (p: AnyPropagationPolicy) => p.spec?.priority ?? 0;
const isCpp = (p: AnyPropagationPolicy) => p.kind === "ClusterPropagationPolicy";

/**
 * How strongly a preempting policy selects the template: upstream fetches the template of each
 * resource selector by its name (fetchResourceTemplate), so only selectors with a `name` count
 * (the webhook requires one when `preemption: Always`).
 */
function namedMatch(t: KubeObject, p: AnyPropagationPolicy): number {
  return selectorsPriority(t, (p.spec?.resourceSelectors ?? []).filter((rs) => !!rs.name));
}

/**
 * Whether `p` may take the template over from the policy that claims it (upstream
 * pkg/detector/preemption.go): only with `preemption: Always`, never from itself, never while
 * being deleted. A PropagationPolicy takes over from a lower-priority PropagationPolicy and from
 * any ClusterPropagationPolicy whatever its priority; a ClusterPropagationPolicy only from a
 * lower-priority ClusterPropagationPolicy. `claiming` is the claiming policy as read (undefined:
 * gone, and the detector releases the template instead).
 */
export function mayPreempt(p: AnyPropagationPolicy, claim: Claim, claiming: AnyPropagationPolicy | undefined): boolean {
  if (p.spec?.preemption !== "Always" || p.metadata.deletionTimestamp || !claiming) return false;
  const sameKind = p.kind === claim.kind;
  if (sameKind && (p.metadata.name ?? "") === claim.name && (isCpp(p) || (p.metadata.namespace ?? "") === claim.namespace)) return false;
  if (!isCpp(p) && claim.kind === "ClusterPropagationPolicy") return true;
  if (!sameKind) return false; // a CPP never takes over from a PP
  return explicit(p) > explicit(claiming);
}

/**
 * The policy that takes a claimed template over, if any: among the policies (of the template's
 * namespace and cluster-wide) that select it by name and may preempt the claiming one, a
 * PropagationPolicy before any ClusterPropagationPolicy (high-priority PP > low-priority PP >
 * CPP), then explicit priority, implicit priority and name as when choosing for an unclaimed
 * template. The highest goes first, so one change never preempts twice.
 */
export function preemptor(t: KubeObject, claim: Claim, claiming: AnyPropagationPolicy | undefined, candidates: readonly AnyPropagationPolicy[]): AnyPropagationPolicy | undefined {
  const ns = t.metadata.namespace ?? "";
  let best: { policy: AnyPropagationPolicy; explicit: number; implicit: number; cpp: boolean } | undefined;
  for (const policy of candidates) {
    if (!isCpp(policy) && (!ns || (policy.metadata.namespace ?? "") !== ns)) continue;
    if (!mayPreempt(policy, claim, claiming)) continue;
    const implicit = namedMatch(t, policy);
    if (implicit === ImplicitPriority.MisMatch) continue;
    const cand = { policy, explicit: explicit(policy), implicit, cpp: isCpp(policy) };
    if (!best || (best.cpp && !cand.cpp) || (best.cpp === cand.cpp && comparePolicies(cand, best) < 0)) best = cand;
  }
  return best?.policy;
}

/** The Event message upstream records on the template when the take-over succeeded. */
export function preemptedMessage(p: AnyPropagationPolicy, claim: Claim): string {
  const by = isCpp(p) ? `Cluster propagation policy(${p.metadata.name ?? ""})` : `Propagation policy(${p.metadata.namespace ?? ""}/${p.metadata.name ?? ""})`;
  const from = claim.kind === "ClusterPropagationPolicy" ? `cluster propagation policy(${claim.name})` : `propagation policy(${claim.namespace}/${claim.name})`;
  return `${by} preempted ${from} successfully`;
}
