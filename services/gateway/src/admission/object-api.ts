import { GK, AlreadyExistsError, InvalidError, KARMADA, groupKind, type KubeObject } from "@flotilla/api";
import type { ListResult, ListStream, ObjectStore, WatchEvent } from "@flotilla/store";
import { ObjectApi, type AdmissionSettings, type ListQuery, type Scope } from "../objects.js";
import type { PatchType } from "../logic/patch.js";
import { credentialSecret, extractInlineCredential, isSecret, prepareSecret, redact, type InlineCredential } from "./credentials.js";

const isSecretScope = (s: Scope) => s.type.group === "" && s.type.kind === "Secret";
const isClusterScope = (s: Scope) => s.type.group === KARMADA.cluster.group && s.type.kind === "Cluster";

function redactStream(list: ListStream<KubeObject>): ListStream<KubeObject> {
  return {
    resourceVersion: list.resourceVersion,
    async *[Symbol.asyncIterator]() {
      for await (const o of list) yield redact(o);
    },
  };
}

async function* redactEvents(events: AsyncGenerator<WatchEvent>): AsyncGenerator<WatchEvent> {
  for await (const e of events) yield isSecret(e.object) ? { ...e, object: redact(e.object) } : e;
}

/**
 * The ObjectApi with member credentials guarded (see credentials.ts): Secret values never leave
 * the gateway (REST, gRPC, watches), Secret writes fold `stringData` and keep blanked values,
 * and a Cluster's inline bearer-token annotation is moved into its Secret before the Cluster is
 * stored. Everything else is the ObjectApi's behaviour.
 */
export class GuardedObjectApi extends ObjectApi {
  constructor(
    private readonly objects: ObjectStore,
    settings: AdmissionSettings,
    now?: () => Date,
  ) {
    super(objects, settings, now);
  }

  /** The credential writes this API makes itself are recorded as the user's too. */
  override asUser(user: string): this {
    return Object.assign(super.asUser(user), { objects: this.objects.as(`user:${user}`) });
  }

  override async get(s: Scope, name: string): Promise<KubeObject> {
    return redact(await super.get(s, name));
  }

  override async list(s: Scope, q?: ListQuery): Promise<ListResult<KubeObject>> {
    const r = await super.list(s, q);
    return isSecretScope(s) ? { ...r, items: r.items.map(redact) } : r;
  }

  override async listStream(s: Scope, q?: Omit<ListQuery, "limit">): Promise<ListStream<KubeObject>> {
    const list = await super.listStream(s, q);
    return isSecretScope(s) ? redactStream(list) : list;
  }

  override async watch(s: Scope, opts: { labelSelector?: string; resourceVersion?: string; signal?: AbortSignal }): Promise<AsyncGenerator<WatchEvent>> {
    const events = await super.watch(s, opts);
    return isSecretScope(s) ? redactEvents(events) : events;
  }

  override async create(s: Scope, body: unknown): Promise<KubeObject> {
    if (isSecretScope(s)) return redact(await super.create(s, prepareSecret(body, undefined)));
    if (isClusterScope(s)) {
      const name = nameOf(body);
      const { body: clean, credential } = extractInlineCredential(body, name);
      if (!credential) return super.create(s, body);
      // the Cluster first (its uid owns the Secret); a name already taken must not touch that cluster's Secret
      if (name && (await this.objects.get({ gk: groupKind(s.type), name }))) throw new AlreadyExistsError({ group: s.type.group, kind: s.type.kind, name });
      await this.credentialFree(credential, name);
      const cluster = await super.create(s, clean);
      try {
        await this.writeCredential(credential, { name: cluster.metadata.name ?? name, uid: cluster.metadata.uid });
      } catch (e) {
        await this.objects.delete({ gk: groupKind(s.type), name: cluster.metadata.name ?? name }).catch(() => undefined);
        throw e;
      }
      return cluster;
    }
    return super.create(s, body);
  }

  override async update(s: Scope, name: string, body: unknown, subresource?: "status"): Promise<KubeObject> {
    if (isSecretScope(s) && !subresource) {
      const stored = await this.objects.get({ gk: GK.secret, namespace: s.namespace, name });
      return redact(await super.update(s, name, prepareSecret(body, stored), subresource));
    }
    if (isClusterScope(s) && !subresource) {
      const { body: clean, credential } = extractInlineCredential(body, name);
      if (credential) {
        await this.credentialFree(credential, name);
        const current = await this.objects.get({ gk: groupKind(s.type), name });
        await this.writeCredential(credential, { name, uid: current?.metadata.uid });
        return super.update(s, name, clean, subresource);
      }
    }
    return redact(await super.update(s, name, body, subresource));
  }

  override async patch(s: Scope, name: string, type: PatchType, patch: unknown, subresource?: "status"): Promise<KubeObject> {
    return redact(await super.patch(s, name, type, patch, subresource));
  }

  /**
   * A patch to a Secret applies to the Secret as a GET shows it (every value ""), and the result
   * is written like a PUT of it: a value left "" keeps the stored one. So no patch operation can
   * read a value: a JSON patch `test` compares with "", and `copy`/`move` carry "" (the moved
   * key's value is gone, the destination is empty).
   */
  protected override patchBase(s: Scope, stored: KubeObject): KubeObject {
    return isSecretScope(s) ? redact(stored) : stored;
  }

  override async delete(s: Scope, name: string, preconditions: { resourceVersion?: string; uid?: string } = {}): Promise<KubeObject | undefined> {
    return redact(await super.delete(s, name, preconditions));
  }

  /**
   * An inline credential may only go to a Secret no other Cluster uses: not one another Cluster
   * owns (ownerReferences) or names in its spec.secretRef. Otherwise writing a Cluster would
   * replace another member's token.
   */
  private async credentialFree(c: InlineCredential, cluster: string): Promise<void> {
    const ref = { group: KARMADA.cluster.group, kind: KARMADA.cluster.kind, name: cluster };
    const field = [{ field: "spec.secretRef", reason: "FieldValueForbidden" as const, message: "" }];
    const existing = await this.objects.get({ gk: GK.secret, namespace: c.secret.namespace, name: c.secret.name });
    const owner = existing?.metadata.ownerReferences?.find((o) => o.kind === "Cluster" && o.name !== cluster);
    const users = (await this.objects.list<KubeObject>(groupKind(KARMADA.cluster))).items.filter((o) => {
      const r = (o.spec as { secretRef?: { namespace?: string; name?: string } } | undefined)?.secretRef;
      return o.metadata.name !== cluster && r?.name === c.secret.name && (r.namespace ?? "") === c.secret.namespace;
    });
    const other = owner?.name ?? users[0]?.metadata.name;
    if (other) {
      field[0]!.message = `Forbidden: the secret ${c.secret.namespace}/${c.secret.name} is the credential of cluster ${JSON.stringify(other)}`;
      throw new InvalidError(ref, field);
    }
  }

  /** Creates or updates the Secret an inline credential goes to. */
  private async writeCredential(c: InlineCredential, cluster: { name: string; uid?: string }): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const existing = await this.objects.get({ gk: GK.secret, namespace: c.secret.namespace, name: c.secret.name });
      const secret = credentialSecret(c, cluster, existing);
      try {
        if (existing) await this.objects.update(secret);
        else await this.objects.create(secret);
        return;
      } catch (e) {
        const name = (e as Error).name;
        if (attempt >= 3 || (name !== "ConflictError" && name !== "AlreadyExistsError")) throw e;
      }
    }
  }
}

function nameOf(body: unknown): string {
  const m = (body as { metadata?: { name?: unknown } } | undefined)?.metadata;
  return typeof m?.name === "string" ? m.name : "";
}
