import { GK, jsonClean, kindKey, parseKindKey, type AnyPropagationPolicy, type AnyResourceBinding, type KubeObject } from "@flotilla/api";
import { done, terminal, type ReconcileContext, type Reconciler } from "@flotilla/runtime";
import { bindingChanged, bindingIdLabel, bindingRefFor, buildBinding, foreignOwner, mergeBinding } from "../logic/binding.js";
import { claimFor, claimOf, hasClaim, withClaimMeta, type Claim, type PolicyKind } from "../logic/claim.js";
import { isIgnoredTemplate } from "../logic/namespaces.js";
import { EventReasonPreemptPolicySucceed, preemptedMessage, preemptor } from "../logic/preemption.js";
import { matchesAnySelector, pickPolicyForTemplate } from "../logic/selectors.js";
import { EventReasonApplyPolicyFailed, cutMessage, templateProblem, withStalled, withoutStalled } from "../logic/stalled.js";
import { ensurePolicyFinalizer, policyGk, releaseTemplate, toRef, writeStatus, type ControllerDeps } from "./common.js";

export const detectorName = "resource-detector";


/**
 * The resource detector: for one template, find the policy that claims it (the one that
 * already does, else the best match: a PP of its namespace before any CPP, then explicit
 * priority, implicit priority and name), mark the claim on the template and create or update
 * its (Cluster)ResourceBinding. A template no policy matches simply waits: creating or
 * changing a policy enqueues the templates it selects (see the policy controller), so there
 * is no in-memory waiting list to lose.
 * A template a policy selects whose fields cannot be read (stored without the gateway's
 * checks) fails terminally before anything is claimed or built: it gets the `Stalled`
 * condition and an `ApplyPolicyFailed` Event (see logic/stalled.ts), and is looked at again
 * when it or a policy changes.
 */
export function resourceDetector(d: ControllerDeps): Reconciler<string> {
  return {
    name: detectorName,
    async reconcile(key, ctx) {
      d.detectorStarts.mark(key);
      const t = await d.store.get(parseKindKey(key));
      if (!t) return done(); // the binding goes with its owner
      ctx.observed(t.metadata.resourceVersion);
      // from here on, every outcome that is not an error covers this version of the template
      const covered = (rv = t.metadata.resourceVersion) => {
        d.seen.detector.reconciled(key, rv);
        return done();
      };
      if (t.metadata.deletionTimestamp || isIgnoredTemplate(t, d.skipped)) return covered();

      const claim = claimOf(t.metadata);
      if (claim) {
        const policy = await d.store.get<AnyPropagationPolicy>({ gk: policyGk(claim.kind), namespace: claim.namespace, name: claim.name });
        if (!policy || claimFor(policy).id !== claim.id) {
          // the claiming policy is gone: let go, and the write wakes this template up to look again
          ctx.log.info({ policy: claim }, "claiming policy is gone; releasing template");
          await releaseTemplate(d.store, t, claim.kind, claim.id);
          return covered();
        }
        if (policy.metadata.deletionTimestamp) throw new Error(`claiming ${claim.kind} ${claim.namespace ? claim.namespace + "/" : ""}${claim.name} is being deleted`);
        // e.g. the template's labels no longer match: the policy controller releases it
        if (!matchesAnySelector(t, policy.spec?.resourceSelectors)) return covered();
        const taker = d.settings.policyPreemption ? await preemptingPolicy(d, t, claim, policy) : undefined;
        if (taker) {
          const rv = await applyPolicy(d, t, taker, false, ctx);
          ctx.log.info({ policy: claimFor(taker), preempted: claim }, "policy preempted the claiming policy");
          await d.events.detector.normal(t, EventReasonPreemptPolicySucceed, preemptedMessage(taker, claim));
          return covered(rv);
        }
        return covered(await applyPolicy(d, t, policy, false, ctx));
      }

      const policy = await choosePolicy(d, t);
      if (!policy) return covered(); // waits: a new or changed policy enqueues it
      await requireDependentOverrides(d, policy);
      return covered(await applyPolicy(d, t, policy, true, ctx));
    },
  };
}

/**
 * IsDependentOverridesPresent: a policy is applied to an unclaimed template only once every
 * override policy named in its `dependentOverrides` exists (OverridePolicies of its namespace
 * for a PropagationPolicy, ClusterOverridePolicies for a ClusterPropagationPolicy); until then
 * the reconcile fails and is retried with backoff, as upstream ("waiting for dependent overrides").
 */
async function requireDependentOverrides(d: ControllerDeps, policy: AnyPropagationPolicy): Promise<void> {
  const names = policy.spec?.dependentOverrides ?? [];
  if (names.length === 0) return;
  const cluster = policy.kind === "ClusterPropagationPolicy";
  const gk = cluster ? GK.clusterOverridePolicy : GK.overridePolicy;
  const namespace = cluster ? "" : (policy.metadata.namespace ?? "");
  const missing: string[] = [];
  for (const name of names) if (!(await d.store.get({ gk, namespace, name }))) missing.push(name);
  if (missing.length) throw new Error(`waiting for dependent overrides of ${policy.kind} ${namespace ? namespace + "/" : ""}${policy.metadata.name ?? ""}: ${missing.join(", ")}`);
}

/**
 * Preemption (feature gate PolicyPreemption): the policy with `preemption: Always` that takes
 * the claimed template over from `claiming`, if any (see logic/preemption.ts). Upstream runs
 * this when the preempting policy changes; here the policy controller enqueues the templates a
 * preemption could concern (see there) and the decision is taken on the template, so it also
 * holds after a restart or a missed wake-up.
 */
async function preemptingPolicy(d: ControllerDeps, t: KubeObject, claim: Claim, claiming: AnyPropagationPolicy): Promise<AnyPropagationPolicy | undefined> {
  const ns = t.metadata.namespace ?? "";
  const [pps, cpps] = await Promise.all([ns ? d.policies.list(GK.propagationPolicy, ns) : [], d.policies.list(GK.clusterPropagationPolicy, "")]);
  return preemptor(t, claim, claiming, [...pps, ...cpps]);
}

/**
 * The policy for an unclaimed template, chosen on cached policy lists; when none of those
 * matches, on lists read after the template was written (see PolicyCache). Whether the choice
 * still stands is checked right after the claim is written (see applyPolicy).
 */
async function choosePolicy(d: ControllerDeps, t: KubeObject): Promise<AnyPropagationPolicy | undefined> {
  const ns = t.metadata.namespace ?? "";
  const pick = async (rv?: string) =>
    (ns ? pickPolicyForTemplate(t, await d.policies.list(GK.propagationPolicy, ns, rv), []) : undefined) ??
    pickPolicyForTemplate(t, [], await d.policies.list(GK.clusterPropagationPolicy, "", rv));
  return (await pick()) ?? (await pick(t.metadata.resourceVersion ?? ""));
}

/**
 * ApplyPolicy / ApplyClusterPolicy: claim the template, then create or update its binding;
 * returns the template version this covers.
 * After writing a claim the policy is read again: deleted or being deleted meanwhile (its
 * controller may have listed the templates it claims just before this claim landed), the
 * claim is withdrawn and the template looks again; otherwise the binding is built from what
 * the policy says now.
 */
async function applyPolicy(d: ControllerDeps, t: KubeObject, policy: AnyPropagationPolicy, unclaimed: boolean, ctx: ReconcileContext): Promise<string | undefined> {
  const problem = templateProblem(t);
  if (problem) return invalidTemplate(d, t, policy, problem, ctx);
  let p: AnyPropagationPolicy;
  try {
    p = await ensurePolicyFinalizer(d, policy);
  } catch (e) {
    // chosen on a list that is out of date (the policy is gone or going): read the lists again
    if (unclaimed) d.policies.invalidate(policyGk(policy.kind as PolicyKind), policy.metadata.namespace ?? "");
    throw e;
  }
  const claim = claimFor(p);
  let template = t;
  if (!hasClaim(t.metadata, claim)) {
    // a conflict throws: the retry re-reads the template and decides again
    template = await d.store.update({ ...t, metadata: withClaimMeta(t.metadata, claim) });
    ctx.observed(template.metadata.resourceVersion);
    const fresh = await d.store.get<AnyPropagationPolicy>({ gk: policyGk(claim.kind), namespace: claim.namespace, name: claim.name });
    if (!fresh || fresh.metadata.uid !== p.metadata.uid || fresh.metadata.deletionTimestamp || !matchesAnySelector(template, fresh.spec?.resourceSelectors)) {
      // withdrawn: this write wakes the template up again to choose anew
      await releaseTemplate(d.store, template, claim.kind, claim.id);
      ctx.log.debug({ policy: claim }, "policy changed while claiming; claim withdrawn");
      return t.metadata.resourceVersion;
    }
    p = fresh;
    // this claim's wake-up is news to nobody here: the binding written next carries it on
    const rv = template.metadata.resourceVersion;
    d.seen.detector.wrote(kindKey(toRef(template)), rv);
    d.seen.binding.wrote(kindKey(toRef(template)), rv);
    ctx.log.info({ policy: { kind: claim.kind, namespace: claim.namespace || undefined, name: claim.name } }, "claimed template");
  }
  await upsertBinding(d, template, p, unclaimed, ctx);
  return (await clearStalled(d, template, ctx))?.metadata.resourceVersion ?? template.metadata.resourceVersion;
}

/** Writes the template's status (a condition), as news to neither controller of this service. */
async function writeTemplateStatus(d: ControllerDeps, t: KubeObject, change: (status: unknown) => unknown, ctx: ReconcileContext): Promise<KubeObject | undefined> {
  const next = change(t.status);
  if (next === undefined) return undefined;
  const ref = toRef(t);
  const written = await writeStatus(d.store, ref, { ...t, status: next as KubeObject["status"] }, (cur) => {
    if (cur.metadata.uid !== t.metadata.uid) return undefined;
    const s = change(cur.status);
    return s === undefined ? undefined : { ...cur, status: s as KubeObject["status"] };
  });
  const rv = written?.metadata.resourceVersion;
  d.seen.detector.wrote(kindKey(ref), rv);
  d.seen.binding.wrote(kindKey(ref), rv);
  ctx.observed(rv);
  return written;
}

/**
 * The template cannot be read: record it on the template (the `Stalled` condition and an
 * `ApplyPolicyFailed` Event, as upstream's detector does when BuildResourceBinding fails) and
 * fail terminally. Nothing is claimed and no binding is built or changed.
 */
async function invalidTemplate(d: ControllerDeps, t: KubeObject, policy: AnyPropagationPolicy, problem: Error, ctx: ReconcileContext): Promise<never> {
  const message = cutMessage(problem.message);
  const now = d.now();
  await writeTemplateStatus(d, t, (s) => withStalled(s, message, now), ctx);
  const which = policy.kind === "ClusterPropagationPolicy" ? `cluster policy(${policy.metadata.name ?? ""})` : `policy(${policy.metadata.namespace ?? ""}/${policy.metadata.name ?? ""})`;
  await d.events.detector.warning(t, EventReasonApplyPolicyFailed, cutMessage(`Apply ${which} failed: ${problem.message}`));
  return terminal(problem);
}

/** A template that can be read again loses its `Stalled` condition; returns the template written, if any. */
function clearStalled(d: ControllerDeps, t: KubeObject, ctx: ReconcileContext): Promise<KubeObject | undefined> {
  return writeTemplateStatus(d, t, withoutStalled, ctx);
}

/**
 * CreateOrUpdate of the binding with the resourceVersion just read, re-reading and merging
 * again on conflict, so that a concurrent scheduler or eviction write is never lost. For a
 * template that was unclaimed the binding most likely does not exist yet: create first.
 */
async function upsertBinding(d: ControllerDeps, t: KubeObject, policy: AnyPropagationPolicy, createFirst: boolean, ctx: ReconcileContext): Promise<void> {
  const desired = buildBinding(t, policy);
  const ref = bindingRefFor(t);
  const { written } = await d.store.upsert<AnyResourceBinding>(
    ref,
    (existing) => {
      if (!existing) {
        const idLabel = bindingIdLabel(desired);
        return jsonClean({ ...desired, metadata: { ...desired.metadata, labels: { ...desired.metadata.labels, [idLabel]: d.uuid() } } });
      }
      const owner = foreignOwner(existing, t);
      if (owner) throw new Error(`binding ${ref.namespace ? ref.namespace + "/" : ""}${ref.name} is owned by ${owner}, not this template; waiting for its garbage collection`);
      const merged = jsonClean(mergeBinding(existing, desired, policy));
      const idLabel = bindingIdLabel(merged);
      if (!merged.metadata.labels?.[idLabel]) merged.metadata.labels = { ...merged.metadata.labels, [idLabel]: d.uuid() };
      return bindingChanged(existing, merged) ? merged : undefined;
    },
    { first: createFirst ? null : undefined },
  );
  if (written) ctx.log.debug({ binding: ref }, `${written} binding`);
}
