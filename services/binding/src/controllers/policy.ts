import { GK, groupKind, isTemplateType, kindKey, parseKindKey, resourceByKind, selectorRequirements, type AnyPropagationPolicy, type AnyResourceBinding, type KubeObject, type ResourceSelector, type KeyRef } from "@flotilla/api";
import { LastSignatures, after, done, type Reconciler } from "@flotilla/runtime";
import { bindingFollowsPolicy } from "../logic/binding.js";
import { claimFor, claimOf, idLabelOf, type PolicyKind } from "../logic/claim.js";
import { isIgnoredTemplate } from "../logic/namespaces.js";
import { matchesAnySelector } from "../logic/selectors.js";
import { ensurePolicyFinalizer, labelEquals, policyFinalizer, policyGk, releaseTemplate, stripClaim, templateRef, toRef, type ControllerDeps } from "./common.js";

export const policyControllerName = "propagation-policy";

export interface PolicyControllerDeps extends ControllerDeps {
  /** Queues a template for the detector; resolves once a reconcile of it that started after the call succeeded. */
  enqueueTemplate(key: string): Promise<void>;
}

/**
 * Reacts to (Cluster)PropagationPolicy changes (one code path for both):
 * - created or updated: the templates of its bindings, and every unclaimed template its
 *   selectors pick, go to the detector (which applies the policy, or a better one); bindings
 *   whose template no longer matches lose the claim. It waits for those reconciles, so the
 *   wake-up is acked only once they happened (a bounded wait, then a durable retry).
 * - deleted: the claim is removed from its templates and bindings (which, with their Works,
 *   stay), then the finalizer is released; a released template may be claimed by another policy.
 */
export function policyController(d: PolicyControllerDeps): Reconciler<string> {
  // uid/generation of each policy whose change was fully fanned out by this replica: like
  // upstream's update handler, a write that did not move the generation (our finalizer, labels,
  // annotations) needs no new fan-out. Forgotten on restart, when everything fans out once.
  const fannedOut = new LastSignatures();
  return {
    name: policyControllerName,
    async reconcile(key, ctx) {
      const ref = parseKindKey(key);
      const policy = await d.store.get<AnyPropagationPolicy>(ref);
      if (!policy) {
        fannedOut.forget(key);
        return done();
      }
      const kind = policy.kind as PolicyKind;
      const { id } = claimFor(policy);

      if (policy.metadata.deletionTimestamp) {
        const fin = policyFinalizer(kind);
        if (!(policy.metadata.finalizers ?? []).includes(fin)) return done();
        const released = id ? await releaseAll(d, policy, kind, id) : 0;
        await d.store.mutate<AnyPropagationPolicy>(ref, (cur) =>
          (cur.metadata.finalizers ?? []).includes(fin) ? { ...cur, metadata: { ...cur.metadata, finalizers: (cur.metadata.finalizers ?? []).filter((f) => f !== fin) } } : undefined,
        );
        ctx.log.info({ released }, "policy deleted; claims released");
        fannedOut.forget(key);
        return done();
      }

      const p = await ensurePolicyFinalizer(d, policy);
      const version = `${p.metadata.uid}/${p.metadata.generation}`;
      if (fannedOut.same(key, version)) return done();
      const selectors = p.spec?.resourceSelectors ?? [];
      const keys = new Set<string>();
      const selected = await selectedTemplates(d, p, kind, selectors);
      const byKey = new Map(selected.map((t) => [kindKey(toRef(t)), t]));

      // the policy's own bindings: refresh those that do not follow it yet, release those whose template no longer matches
      for (const b of await derivedBindings(d, p, kind, claimFor(p).id)) {
        const tref = templateRef(b.spec?.resource ?? {});
        const known = byKey.get(kindKey(tref));
        if (known && bindingFollowsPolicy(b, p) && matchesAnySelector(known, selectors)) continue;
        const t = byKey.get(kindKey(tref)) ?? (await d.store.get(tref));
        if (!t) continue;
        if (!matchesAnySelector(t, selectors)) {
          await releaseTemplate(d.store, t, kind, claimFor(p).id);
          continue;
        }
        keys.add(kindKey(tref));
      }

      // preemption: templates claimed by another policy that this one (preemption Always) or, after
      // this one changed, another preempting policy of the scope may take over; the detector decides
      if (d.settings.policyPreemption) for (const k of await preemptionCandidates(d, p, kind, selected)) keys.add(k);

      // templates waiting for a policy; not those the detector here started on since its policy
      // lists include this version of the policy (they already considered it)
      const since = d.policies.visibleSince(ref.gk, ref.namespace, policy.metadata.resourceVersion);
      for (const t of selected) {
        if (claimOf(t.metadata) || isIgnoredTemplate(t, d.skipped) || t.metadata.deletionTimestamp) continue;
        const k = kindKey(toRef(t));
        const started = d.detectorStarts.get(k);
        if (since !== undefined && started !== undefined && started > since) continue;
        keys.add(k);
      }

      if (keys.size === 0) {
        fannedOut.record(key, version);
        return done();
      }
      ctx.log.debug({ templates: keys.size }, "policy change fans out to templates");
      const settled = await waitAll(
        [...keys].map((k) => d.enqueueTemplate(k)),
        d.settings.policyFanoutWaitMs,
      );
      // not all reconciled in time: come back (durably) and enqueue again; converged ones are cheap no-ops
      if (!settled) return after(1000);
      fannedOut.record(key, version);
      return done();
    },
  };
}

/**
 * The templates a preemption could concern after a change of `p`: those it selects that another
 * policy claims, when `p` says `preemption: Always`; and those `p` claims that a preempting
 * policy of higher priority of its scope (or, for a ClusterPropagationPolicy claim, any
 * preempting PropagationPolicy of the template's namespace) selects by name, which covers
 * upstream's HandleDeprioritized(Cluster)PropagationPolicy.
 */
async function preemptionCandidates(d: ControllerDeps, p: AnyPropagationPolicy, kind: PolicyKind, selected: readonly KubeObject[]): Promise<string[]> {
  const out: string[] = [];
  const own = claimFor(p);
  if (p.spec?.preemption === "Always") {
    for (const t of selected) {
      const c = claimOf(t.metadata);
      if (c && !(c.kind === own.kind && c.namespace === own.namespace && c.name === own.name) && !t.metadata.deletionTimestamp) out.push(kindKey(toRef(t)));
    }
  }
  const rivals = (await d.policies.list(policyGk(kind), p.metadata.namespace ?? "")).filter((r) => r.spec?.preemption === "Always" && (r.spec?.priority ?? 0) > (p.spec?.priority ?? 0));
  const claimed = rivals.length && own.id ? await selectedTemplates(d, p, kind, p.spec?.resourceSelectors ?? [], { key: idLabelOf(kind), id: own.id }) : [];
  for (const t of claimed) if (rivals.some((r) => matchesAnySelector(t, (r.spec?.resourceSelectors ?? []).filter((rs) => !!rs.name)))) out.push(kindKey(toRef(t)));
  return out;
}

/** The bindings carrying the policy's claim (a PP's in its namespace; a CPP's anywhere, RB and CRB). */
async function derivedBindings(d: ControllerDeps, p: AnyPropagationPolicy, kind: PolicyKind, id: string): Promise<AnyResourceBinding[]> {
  if (!id) return [];
  const sel = labelEquals(idLabelOf(kind), id);
  if (kind === "PropagationPolicy") return (await d.store.list<AnyResourceBinding>(GK.resourceBinding, { namespace: p.metadata.namespace, labelSelector: sel })).items;
  const [rbs, crbs] = await Promise.all([
    d.store.list<AnyResourceBinding>(GK.resourceBinding, { labelSelector: sel }),
    d.store.list<AnyResourceBinding>(GK.clusterResourceBinding, { labelSelector: sel }),
  ]);
  return [...rbs.items, ...crbs.items];
}

/**
 * The templates the selectors could pick, read per selector: by name, or by kind (and
 * namespace) with the label selector; a PP only looks in its own namespace. With `claimLabel`,
 * instead every template of the selected kinds carrying that claim (what one policy claimed).
 */
async function selectedTemplates(d: ControllerDeps, p: AnyPropagationPolicy, kind: PolicyKind, selectors: readonly ResourceSelector[], claimLabel?: { key: string; id: string }): Promise<KubeObject[]> {
  const out = new Map<string, KubeObject>();
  const seen = new Set<string>();
  for (const rs of selectors) {
    const type = resourceByKind(rs.apiVersion ?? "", rs.kind ?? "");
    if (!type || !isTemplateType(type)) continue;
    const gk = groupKind(type);
    let ns = kind === "PropagationPolicy" ? (p.metadata.namespace ?? "") : (rs.namespace ?? "");
    if (!type.namespaced) ns = "";
    let items: KubeObject[];
    if (rs.name && !claimLabel) {
      const t = await d.store.get({ gk, namespace: ns, name: rs.name });
      items = t ? [t] : [];
    } else {
      const reqs = claimLabel ? labelEquals(claimLabel.key, claimLabel.id) : rs.labelSelector && !rs.name ? selectorRequirements(rs.labelSelector) : [];
      const listKey = `${gk}|${ns}|${JSON.stringify(reqs)}`;
      if (seen.has(listKey)) continue;
      seen.add(listKey);
      items = (await d.store.list(gk, { namespace: ns || undefined, labelSelector: reqs })).items;
    }
    for (const t of items) if (claimLabel || matchesAnySelector(t, [rs])) out.set(kindKey(toRef(t)), t);
  }
  return [...out.values()];
}

/** handlePolicyDeletion: strip the claim from every template and binding that carries this policy's id. */
async function releaseAll(d: ControllerDeps, p: AnyPropagationPolicy, kind: PolicyKind, id: string): Promise<number> {
  const idLabel = idLabelOf(kind);
  const templates = new Map<string, KubeObject>();
  for (const t of await selectedTemplates(d, p, kind, p.spec?.resourceSelectors ?? [], { key: idLabel, id })) templates.set(kindKey(toRef(t)), t);
  const bindings = await derivedBindings(d, p, kind, id);
  for (const b of bindings) {
    const tref: KeyRef = templateRef(b.spec?.resource ?? {});
    if (templates.has(kindKey(tref))) continue;
    const t = await d.store.get(tref);
    if (t) templates.set(kindKey(tref), t);
    else await stripClaim(d.store, toRef(b), kind, id);
  }
  const all = [...templates.values()];
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(RELEASE_CONCURRENCY, all.length) }, async () => {
      while (next < all.length) await releaseTemplate(d.store, all[next++]!, kind, id);
    }),
  );
  return templates.size;
}

/** Claims released at once when a policy goes. */
const RELEASE_CONCURRENCY = 16;

/** Resolves true once every promise resolved, false if `ms` passes first; rejects if one rejects. */
async function waitAll(ps: Promise<void>[], ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([Promise.all(ps).then(() => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
