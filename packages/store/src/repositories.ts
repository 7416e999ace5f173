import { GK, bindingKey, bindingRefOfKey, kindKey, objectKeyOf, parseKindKey, type AnyResourceBinding, type Cluster, type KubeObject, type Work } from "@flotilla/api";
import { gkOf, type ListOptions, type ObjectRef, type ObjectStore } from "./store.js";

/** A key and the resourceVersion of the object it was listed with. */
export interface KeyedVersion {
  key: string;
  resourceVersion?: string;
}

/** What a repository uses of the store. */
export type RepositoryStore = Pick<ObjectStore, "get" | "list" | "listStream" | "mutateWritten">;

/** An object as a key is made of it. */
type Keyed = Pick<KubeObject, "metadata"> & Partial<Pick<KubeObject, "apiVersion" | "kind">>;

/** How a kind's controller keys name its objects. */
interface KeyCodec {
  key(o: Keyed): string;
  /** The object a key names (undefined: not a key of this kind). */
  ref(key: string): ObjectRef | undefined;
}

/**
 * Typed access to one kind (a binding: both scopes through one type): its GroupKinds, the
 * controller key of its objects, and the store's reads and writes by key. A service reads and
 * writes its kinds through these rather than spelling GroupKinds, references and key formats
 * again; the store's own operations (watch, finalizers, indexes) stay on `ObjectStore`.
 */
export class Repository<T extends KubeObject> {
  constructor(
    private readonly store: RepositoryStore,
    /** The GroupKinds the repository spans ("cluster.karmada.io/Cluster"; a binding's two). */
    readonly kinds: readonly string[],
    private readonly codec: KeyCodec,
  ) {}

  /** The controller key of an object. */
  key(o: Keyed): string {
    return this.codec.key(o);
  }

  /** The object a key names, or undefined when the key is not one of this kind. */
  ref(key: string): ObjectRef | undefined {
    return this.codec.ref(key);
  }

  /** The object a key names (undefined when it does not exist, or the key is not one of this kind). */
  async get(key: string): Promise<T | undefined> {
    const ref = this.ref(key);
    return ref ? this.store.get<T>(ref) : undefined;
  }

  /** Every object of the kinds that matches `o` (a namespace, a label selector, an index entry), the kinds read together. */
  async list(o: Pick<ListOptions, "namespace" | "index" | "labelSelector"> = {}): Promise<T[]> {
    const lists = await Promise.all(this.kinds.map((gk) => this.store.list<T>(gk, o)));
    return lists.flatMap((l) => l.items);
  }

  /**
   * The keys of every object that matches `o` (and `keep`), with their resourceVersions, read in
   * batches without holding the whole list.
   */
  async keys(o: Pick<ListOptions, "namespace" | "labelSelector"> & { keep?: (obj: T) => boolean } = {}): Promise<KeyedVersion[]> {
    const { keep, ...filter } = o;
    const out: KeyedVersion[] = [];
    for (const gk of this.kinds) for await (const obj of await this.store.listStream<T>(gk, filter)) if (!keep || keep(obj)) out.push({ key: this.key(obj), resourceVersion: obj.metadata.resourceVersion });
    return out;
  }

  /** The store's read-decide-write (`mutateWritten`) of the object a key names; nothing written for a key not of this kind. */
  async mutate(key: string, decide: (current: T) => T | undefined | Promise<T | undefined>, opts: { status?: boolean; attempts?: number; first?: T } = {}): Promise<{ obj: T | undefined; written: boolean }> {
    const ref = this.ref(key);
    return ref ? this.store.mutateWritten<T>(ref, decide, opts) : { obj: undefined, written: false };
  }
}

const clusterScoped = (gk: string): KeyCodec => ({ key: (o) => o.metadata.name ?? "", ref: (key) => (key && !key.includes("/") ? { gk, namespace: "", name: key } : undefined) });
const namespaced = (gk: string): KeyCodec => ({
  key: (o) => objectKeyOf(o.metadata),
  ref: (key) => {
    const [namespace, name, more] = key.split("/");
    return namespace && name && more === undefined ? { gk, namespace, name } : undefined;
  },
});

/** Clusters (key: the name). */
export const clustersIn = (store: RepositoryStore) => new Repository<Cluster>(store, [GK.cluster], clusterScoped(GK.cluster));

/** ResourceBindings and ClusterResourceBindings through one type (key: `namespace/name` or `name`, see `bindingKey`). */
export const bindingsIn = (store: RepositoryStore) =>
  new Repository<AnyResourceBinding>(store, [GK.resourceBinding, GK.clusterResourceBinding], { key: bindingKey, ref: bindingRefOfKey });

/** Works (key: `namespace/name`, the namespace being the execution namespace of their cluster). */
export const worksIn = (store: RepositoryStore) => new Repository<Work>(store, [GK.work], namespaced(GK.work));

/**
 * Objects of several kinds in one queue (the resource detector's templates, both policy scopes):
 * key `group/Kind|namespace|name` (`kindKey`).
 */
export const kindsIn = (store: RepositoryStore, gks: readonly string[]) =>
  new Repository<KubeObject>(store, gks, {
    key: (o) => kindKey({ gk: o.apiVersion !== undefined && o.kind !== undefined ? gkOf({ apiVersion: o.apiVersion, kind: o.kind }) : "", namespace: o.metadata.namespace ?? "", name: o.metadata.name ?? "" }),
    ref: (key) => {
      try {
        const r = parseKindKey(key);
        return gks.includes(r.gk) ? r : undefined;
      } catch {
        return undefined;
      }
    },
  });
