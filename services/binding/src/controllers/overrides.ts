import { GK, type AnyOverridePolicy, type Cluster, type KubeObject } from "@flotilla/api";
import type { Logger } from "@flotilla/log";
import { Informer } from "@flotilla/runtime";
import type { ObjectStore } from "@flotilla/store";
import { OverrideError, matchingOverridePolicies, needsCluster, overrideEntries, type ClusterOverrides } from "../logic/overrides.js";

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
