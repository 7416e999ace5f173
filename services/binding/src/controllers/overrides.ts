import { GK, kindKey, type AnyOverridePolicy, type AnyResourceBinding, type Cluster, type KubeObject, type ResourceSelector } from "@flotilla/api";
import type { Logger } from "@flotilla/log";
import { Informer } from "@flotilla/runtime";
import type { ObjectStore } from "@flotilla/store";
import { OverrideError, matchingOverridePolicies, needsCluster, overrideEntries, type ClusterOverrides } from "../logic/overrides.js";

/**
 * Which override policies each binding's Works were last rendered with, per replica: a policy
 * that changes or goes re-renders those bindings too, not only the ones its current selectors
 * pick (the wake-up carries no old version of the policy). Forgotten on restart, when every
 * binding is reconciled again; the periodic resync covers bindings another replica rendered.
 */
export class OverrideUsers {
  private readonly byPolicy = new Map<string, Set<string>>();
  private readonly byBinding = new Map<string, Set<string>>();

  /** Records that `binding` was rendered with exactly `policies` (policy keys). */
  set(binding: string, policies: readonly string[]): void {
    const old = this.byBinding.get(binding);
    for (const p of old ?? []) {
      const s = this.byPolicy.get(p);
      s?.delete(binding);
      if (s?.size === 0) this.byPolicy.delete(p);
    }
    if (policies.length === 0) {
      this.byBinding.delete(binding);
      return;
    }
    this.byBinding.set(binding, new Set(policies));
    for (const p of policies) {
      let s = this.byPolicy.get(p);
      if (!s) this.byPolicy.set(p, (s = new Set()));
      s.add(binding);
    }
  }

  bindingsOf(policy: string): string[] {
    return [...(this.byPolicy.get(policy) ?? [])];
  }
}

export function policyKey(p: AnyOverridePolicy): string {
  return kindKey({ gk: p.kind === "ClusterOverridePolicy" ? GK.clusterOverridePolicy : GK.overridePolicy, namespace: p.metadata.namespace ?? "", name: p.metadata.name ?? "" });
}

/**
 * The override policies of both kinds, for rendering: the process follows them with an informer
 * (ClusterOverridePolicies under "", OverridePolicies under their namespace) and answers from it
 * once it has caught up with every change committed before the render asked
 * (`Informer.caughtUp`: one poll of its watch, shared by the renders that ask together), so a
 * render never works from policies older than the ones a direct read would give. Before the
 * informer has started, or when a change waits behind a transaction still open, the store is
 * listed as before.
 */
export class OverridePolicies {
  private readonly byScope = new Map<string, Map<string, AnyOverridePolicy>>();
  readonly informer: Informer<AnyOverridePolicy>;

  constructor(private readonly store: ObjectStore, log?: Logger) {
    this.informer = new Informer<AnyOverridePolicy>({
      store,
      gk: [GK.clusterOverridePolicy, GK.overridePolicy],
      log,
      transform: (o) => o as AnyOverridePolicy,
      onEvent: (e) => {
        const scope = e.gk === GK.clusterOverridePolicy ? "" : (e.object.metadata.namespace ?? "");
        const name = e.object.metadata.name ?? "";
        let m = this.byScope.get(scope);
        if (e.value) {
          if (!m) this.byScope.set(scope, (m = new Map()));
          m.set(name, e.value);
        } else if (m?.delete(name) && m.size === 0) this.byScope.delete(scope);
      },
    });
  }

  /** The policies a template is rendered with: cluster policies, then (namespaced templates only) its namespace's; each group in application order. */
  async for(t: KubeObject): Promise<{ cluster: AnyOverridePolicy[]; namespaced: AnyOverridePolicy[] }> {
    const ns = t.metadata.namespace ?? "";
    let cops: AnyOverridePolicy[];
    let ops: AnyOverridePolicy[];
    if (await this.informer.caughtUp()) {
      cops = [...(this.byScope.get("")?.values() ?? [])];
      ops = ns ? [...(this.byScope.get(ns)?.values() ?? [])] : [];
    } else {
      const [c, n] = await Promise.all([
        this.store.list<AnyOverridePolicy>(GK.clusterOverridePolicy),
        ns ? this.store.list<AnyOverridePolicy>(GK.overridePolicy, { namespace: ns }) : Promise.resolve({ items: [] as AnyOverridePolicy[] }),
      ]);
      cops = c.items;
      ops = n.items;
    }
    return { cluster: matchingOverridePolicies(t, cops), namespaced: matchingOverridePolicies(t, ops) };
  }
}

/**
 * Per target cluster, the override entries (or why they cannot be decided: a rule with a
 * targetCluster for a Cluster that does not exist). Reads the Clusters only when a rule needs one.
 */
export async function clusterOverrides(store: ObjectStore, policies: { cluster: AnyOverridePolicy[]; namespaced: AnyOverridePolicy[] }, clusters: readonly string[]): Promise<Map<string, ClusterOverrides | OverrideError>> {
  const out = new Map<string, ClusterOverrides | OverrideError>();
  const need = needsCluster([...policies.cluster, ...policies.namespaced]);
  await Promise.all(
    clusters.map(async (name) => {
      const c = need ? await store.get<Cluster>({ gk: GK.cluster, namespace: "", name }) : undefined;
      try {
        out.set(name, { cluster: overrideEntries(policies.cluster, name, c), namespaced: overrideEntries(policies.namespaced, name, c) });
      } catch (e) {
        if (!(e instanceof OverrideError)) throw e;
        out.set(name, e);
      }
    }),
  );
  return out;
}

/** A selector that could pick the binding's template, ignoring its label selector (the template is not read here). */
function mayPick(rs: ResourceSelector, r: NonNullable<AnyResourceBinding["spec"]>["resource"]): boolean {
  if ((rs.apiVersion ?? "") !== (r?.apiVersion ?? "") || (rs.kind ?? "") !== (r?.kind ?? "")) return false;
  if (rs.namespace && rs.namespace !== (r?.namespace ?? "")) return false;
  return !rs.name || rs.name === r?.name;
}

/**
 * The bindings an override policy's change concerns: those in its scope (an OverridePolicy's
 * namespace; every RB and CRB for a ClusterOverridePolicy) whose template its selectors may pick
 * (all of them when it has none), plus those this replica last rendered with it. A policy that
 * is gone (its selectors unknown) concerns every binding in its scope.
 */
export async function bindingsForOverridePolicy(store: ObjectStore, users: OverrideUsers, gk: string, namespace: string, name: string): Promise<string[]> {
  const keys = new Set(users.bindingsOf(kindKey({ gk, namespace, name })));
  const p = await store.get<AnyOverridePolicy>({ gk, namespace, name });
  const selectors = p?.spec?.resourceSelectors ?? [];
  const lists =
    gk === GK.overridePolicy
      ? [{ gk: GK.resourceBinding, items: (await store.list<AnyResourceBinding>(GK.resourceBinding, { namespace })).items }]
      : [
          { gk: GK.resourceBinding, items: (await store.list<AnyResourceBinding>(GK.resourceBinding)).items },
          { gk: GK.clusterResourceBinding, items: (await store.list<AnyResourceBinding>(GK.clusterResourceBinding)).items },
        ];
  for (const l of lists) {
    for (const b of l.items) {
      if (!p || selectors.length === 0 || selectors.some((rs) => mayPick(rs, b.spec?.resource))) keys.add(kindKey({ gk: l.gk, namespace: b.metadata.namespace ?? "", name: b.metadata.name ?? "" }));
    }
  }
  return [...keys];
}
