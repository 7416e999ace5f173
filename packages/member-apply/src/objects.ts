import { ManagedByKarmadaLabel, ManagedByKarmadaLabelValue, type KubeObject } from "@flotilla/api";
import { MemberInformer, type InformerEvent, type MemberClient } from "@flotilla/kube";
import type { AppliedRecord, MemberState } from "./apply.js";

export const MANAGED_SELECTOR = `${ManagedByKarmadaLabel}=${ManagedByKarmadaLabelValue}`;

export interface MemberObjectsOptions {
  /** A managed member object changed (informer event or re-list difference). */
  onChange?: (type: InformerEvent, obj: KubeObject) => void;
  /** A list failed (the informer retries). */
  onError?: (err: unknown, kind: string) => void;
  /** An informer listed again after failed lists (the member is readable again). */
  onReconnect?: () => void;
  /** Re-list period of the informers (server-side watch timeout), seconds. */
  watchTimeoutSeconds?: number;
}

/**
 * One member's managed objects as an applier keeps them: an informer per kind (label
 * `karmada.io/managed=true`, started when a Work first needs the kind) and the record of what was
 * last applied per object. The execution service keeps one per Push cluster, the agent one.
 */
export class MemberObjects implements MemberState {
  private readonly informers = new Map<string, MemberInformer>();
  private readonly records = new Map<string, AppliedRecord>();

  constructor(private readonly o: MemberObjectsOptions = {}) {}

  informer(client: MemberClient, apiVersion: string, kind: string): MemberInformer {
    const k = `${apiVersion}/${kind}`;
    let inf = this.informers.get(k);
    if (!inf) {
      inf = new MemberInformer({
        client,
        apiVersion,
        kind,
        labelSelector: MANAGED_SELECTOR,
        watchTimeoutSeconds: this.o.watchTimeoutSeconds,
        onChange: (type, obj) => this.o.onChange?.(type, obj),
        onError: (err) => this.o.onError?.(err, kind),
        onListed: ({ afterFailure }) => {
          if (afterFailure) this.o.onReconnect?.();
        },
      }).start();
      this.informers.set(k, inf);
    }
    return inf;
  }

  peekInformer(apiVersion: string, kind: string): MemberInformer | undefined {
    return this.informers.get(`${apiVersion}/${kind}`);
  }

  /** Every running informer. */
  allInformers(): MemberInformer[] {
    return [...this.informers.values()];
  }

  record(key: string): AppliedRecord | undefined {
    return this.records.get(key);
  }

  setRecord(key: string, r: AppliedRecord | undefined): void {
    if (r) this.records.set(key, r);
    else this.records.delete(key);
  }

  /** Stops every informer and forgets the records. */
  async stop(): Promise<void> {
    const all = this.allInformers();
    this.informers.clear();
    this.records.clear();
    await Promise.all(all.map((i) => i.stop()));
  }
}
