import { setMaxListeners } from "node:events";
import type { KubeObject, Work } from "@flotilla/api";
import { coveredBy, isKubeConflict, isKubeUnreachable, type ApplyResult, type KubeApiError, type MemberClient, type MemberInformer } from "@flotilla/kube";
import { interpretHealth, reflectStatus } from "./logic/health.js";
import { desiredObject, digest, healthUnknown, identifierOf, isManaged, manifestsOf, objectVersion, overwrites, preservesOnDeletion, updateVerdict, withoutClaim, type ManifestStatus } from "./logic/work.js";

/** What was last written for one member object: the desired digest and the member's version after the write. */
export interface AppliedRecord {
  digest: string;
  version: string;
}

/**
 * What an applier keeps about one member: informers of the managed objects by kind (started on
 * first use) and the records of what it applied. The execution service keeps one per Push
 * cluster, the agent one for its member.
 */
export interface MemberState {
  informer(client: MemberClient, apiVersion: string, kind: string): MemberInformer;
  peekInformer(apiVersion: string, kind: string): MemberInformer | undefined;
  record(key: string): AppliedRecord | undefined;
  setRecord(key: string, r: AppliedRecord | undefined): void;
}

/** The member's objects of a kind could not be listed: what it holds is not known. */
export class MemberUnreadableError extends Error {
  override readonly name = "MemberUnreadableError";
}

export const objectKeyOf = (o: KubeObject) => `${o.apiVersion}/${o.kind}/${o.metadata.namespace ?? ""}/${o.metadata.name ?? ""}`;

/** Labels and annotations of the desired object, for the metadata drift check. */
function metaOnly(o: KubeObject): KubeObject {
  return { apiVersion: o.apiVersion, kind: o.kind, metadata: { labels: o.metadata.labels, annotations: o.metadata.annotations } };
}

function describe(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Whether retrying could help: the member did not answer, answered 5xx/429, or a write raced. */
export function retryable(e: unknown): boolean {
  if (isKubeUnreachable(e) || isKubeConflict(e) || e instanceof MemberUnreadableError) return true;
  const code = (e as Partial<KubeApiError>).code;
  return e instanceof Error && e.name === "KubeApiError" && typeof code === "number" && (code >= 500 || code === 429);
}

export interface ApplyWorkOptions {
  work: Work;
  cluster: string;
  client: MemberClient;
  state: MemberState;
  signal: AbortSignal;
  /** The Work's manifestStatuses before this pass (kept, health Unknown, for manifests the member could not be read for). */
  previous: readonly ManifestStatus[];
  /** How long to wait for the member's first (or fresh) list of a kind. */
  listWaitMs: number;
}

export interface ApplyWorkResult {
  statuses: ManifestStatus[];
  errors: string[];
  /** A failure retrying could fix (the member did not answer, a write raced). */
  retry: boolean;
}

/**
 * Applies every manifest of a Work to the member (Karmada's execution rules: the managed label
 * and Work annotations, conflictResolution Abort unless Overwrite, an unchanged object is not
 * written again) and reflects each object's status and health.
 */
export async function applyWork(o: ApplyWorkOptions): Promise<ApplyWorkResult> {
  const { work, cluster, client, state, previous, listWaitMs } = o;
  const manifests = manifestsOf(work);
  // one signal for every request of this pass (each request listens on it)
  const ac = new AbortController();
  setMaxListeners(0, ac.signal);
  const abort = () => ac.abort(o.signal.reason);
  if (o.signal.aborted) abort();
  else o.signal.addEventListener("abort", abort, { once: true });
  const signal = ac.signal;
  const statuses: ManifestStatus[] = [];
  const errors: string[] = [];
  let retry = false;
  await Promise.all(
    manifests.map(async (m, i) => {
      const desired = desiredObject(work, m);
      try {
        const res = await client.resourceFor(desired.apiVersion, desired.kind);
        if (!res) throw new Error(`the member does not serve ${desired.kind} in ${desired.apiVersion}`);
        const inf = state.informer(client, desired.apiVersion, desired.kind);
        // Only a cache listed since the last start, reconnect or return of the member says what
        // it holds; a cache from before (or none yet) is waited for, never taken as the truth.
        if (!inf.synced && (inf.lastError !== undefined || !(await inf.waitListed(listWaitMs)))) {
          throw new MemberUnreadableError(`the member's ${desired.kind} objects could not be listed${inf.lastError ? `: ${inf.lastError}` : ""}`);
        }
        const ns = res.namespaced ? desired.metadata.namespace : undefined;
        const observed = inf.get(ns, desired.metadata.name ?? "");
        const objKey = objectKeyOf(desired);
        const dg = digest(desired);
        const rec = state.record(objKey);
        let object: KubeObject;
        if (observed && rec && rec.digest === dg && rec.version === objectVersion(observed) && coveredBy(metaOnly(desired), observed)) {
          object = observed;
        } else {
          const r: ApplyResult = await client.apply(desired, {
            observed,
            mayUpdate: (obj) => updateVerdict(obj, overwrites(work, m), cluster),
            force: !!rec && rec.digest !== dg,
            signal,
          });
          object = r.object;
          object.apiVersion ??= desired.apiVersion;
          object.kind ??= desired.kind;
          inf.observe(object);
          state.setRecord(objKey, { digest: dg, version: objectVersion(object) });
        }
        const status = reflectStatus(object);
        statuses.push({ identifier: identifierOf(i, desired, res.name), ...(status ? { status } : {}), health: interpretHealth(object) });
      } catch (e) {
        if (retryable(e)) {
          retry = true;
          // what the member holds is not known now: the last observation stays, not Healthy
          const prev = previous.find((p) => p.identifier.ordinal === i && p.identifier.kind === desired.kind && p.identifier.name === (desired.metadata.name ?? ""));
          if (prev) statuses.push(...healthUnknown([prev]));
        }
        errors.push(describe(e));
      }
    }),
  );
  o.signal.removeEventListener("abort", abort);
  statuses.sort((a, b) => a.identifier.ordinal - b.identifier.ordinal);
  return { statuses, errors, retry };
}

/**
 * Removes a deleted Work's objects from the member (only those Karmada manages; with
 * preserveResourcesOnDeletion the claim is taken off instead) and forgets them.
 */
export async function deleteWork(work: Work, client: MemberClient, state: MemberState): Promise<void> {
  const preserve = preservesOnDeletion(work);
  for (const m of manifestsOf(work)) {
    const desired = desiredObject(work, m);
    const observed = await client.get(desired);
    if (observed && isManaged(observed)) {
      if (preserve) await client.replace(withoutClaim(observed));
      else
        await client.delete(desired, { propagationPolicy: "Background", preconditions: { uid: observed.metadata.uid } }).catch((e) => {
          // a precondition failure means it was replaced by someone else since: not ours to delete
          if (!isKubeConflict(e)) throw e;
        });
    }
    state.setRecord(objectKeyOf(desired), undefined);
    state.peekInformer(desired.apiVersion, desired.kind)?.forget(desired.metadata.namespace, desired.metadata.name ?? "");
  }
}
