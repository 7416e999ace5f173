import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import type { KubeObject } from "@flotilla/api";

/**
 * Envelope encryption of the member credentials at rest (the Secrets in `karmada-cluster`), as
 * kube-apiserver's aescbc/aesgcm providers do for Secrets: each object's `data` and `stringData`
 * are encrypted with a fresh data key (AES-256-GCM), the data key with the current key of the
 * key file (AES-256-GCM), bound to the Secret's namespace and name (so a sealed value copied
 * onto another Secret does not open). The row, the outbox and every copy in Postgres hold only
 * `sealed`; the store opens it on read. Other Secrets (resource templates the user propagates)
 * are not touched.
 */

/** Where a sealed Secret keeps its ciphertext (instead of `data`/`stringData`). */
export const SEALED_FIELD = "sealed";
export const SEALED_NAMESPACE = "karmada-cluster";
const PREFIX = "flotilla:v1";

export interface SealKey {
  id: string;
  key: Buffer;
}

export class SealError extends Error {
  override readonly name = "SealError";
}

/**
 * Keys, one `id:base64-of-32-bytes` per line (blank lines and `#` comments skipped); the first
 * seals, every one opens. Rotation: put a new key first, restart, let `reseal` rewrite the old
 * Secrets, then drop the old key.
 */
export function parseKeys(text: string): SealKey[] {
  const keys: SealKey[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (!line || line.startsWith("#")) return;
    const m = /^([A-Za-z0-9_.-]{1,64}):([A-Za-z0-9+/=_-]+)$/.exec(line);
    if (!m) throw new SealError(`line ${i + 1}: want id:base64key (id of letters, digits, _ . -)`);
    const key = Buffer.from(m[2]!, "base64");
    if (key.length !== 32) throw new SealError(`line ${i + 1}: the key must be 32 bytes (AES-256), found ${key.length}`);
    if (keys.some((k) => k.id === m[1])) throw new SealError(`line ${i + 1}: key id ${JSON.stringify(m[1])} given twice`);
    keys.push({ id: m[1]!, key });
  });
  if (keys.length === 0) throw new SealError("no key");
  return keys;
}

export const newKeyLine = (id: string) => `${id}:${randomBytes(32).toString("base64")}\n`;

function gcm(key: Buffer, plain: Buffer, aad: string): string {
  const iv = randomBytes(12);
  const c = createCipheriv("aes-256-gcm", key, iv);
  c.setAAD(Buffer.from(aad, "utf8"));
  const ct = Buffer.concat([c.update(plain), c.final()]);
  return Buffer.concat([iv, c.getAuthTag(), ct]).toString("base64");
}

function ungcm(key: Buffer, sealed: string, aad: string): Buffer {
  const b = Buffer.from(sealed, "base64");
  if (b.length < 28) throw new SealError("sealed value too short");
  const d = createDecipheriv("aes-256-gcm", key, b.subarray(0, 12));
  d.setAAD(Buffer.from(aad, "utf8"));
  d.setAuthTag(b.subarray(12, 28));
  return Buffer.concat([d.update(b.subarray(28)), d.final()]);
}

const isCredential = (o: KubeObject) => o.kind === "Secret" && (o.apiVersion === "v1" || o.apiVersion === undefined) && o.metadata?.namespace === SEALED_NAMESPACE;

export class Sealer {
  private readonly byId: Map<string, Buffer>;
  constructor(private readonly keys: SealKey[]) {
    if (keys.length === 0) throw new SealError("no key");
    this.byId = new Map(keys.map((k) => [k.id, k.key]));
  }

  static fromFile(path: string): Sealer {
    return new Sealer(parseKeys(readFileSync(path, "utf8")));
  }

  get primary(): string {
    return this.keys[0]!.id;
  }

  /** The object as it is stored: a credential Secret's values sealed, anything else as it is. */
  seal<T extends KubeObject>(o: T): T {
    if (!isCredential(o)) return o;
    const r = o as Record<string, unknown>;
    if (r.data === undefined && r.stringData === undefined) return o;
    const { data, stringData, [SEALED_FIELD]: _old, ...rest } = r;
    const aad = `${o.metadata.namespace}/${o.metadata.name}`;
    const dek = randomBytes(32);
    const primary = this.keys[0]!;
    const payload = gcm(dek, Buffer.from(JSON.stringify({ data, stringData }), "utf8"), aad);
    const wrapped = gcm(primary.key, dek, aad);
    return { ...rest, [SEALED_FIELD]: `${PREFIX}:${primary.id}:${wrapped}:${payload}` } as unknown as T;
  }

  /** The object as callers see it: a sealed Secret's values back in `data`/`stringData`. */
  open<T extends KubeObject>(o: T): T {
    const r = o as Record<string, unknown>;
    const sealed = r[SEALED_FIELD];
    if (typeof sealed !== "string") return o;
    const [p1, p2, id, wrapped, payload] = sealed.split(":");
    if (`${p1}:${p2}` !== PREFIX || !id || !wrapped || !payload) throw new SealError(`${o.metadata.namespace}/${o.metadata.name}: not a sealed value`);
    const key = this.byId.get(id);
    if (!key) throw new SealError(`${o.metadata.namespace}/${o.metadata.name} is sealed with key ${JSON.stringify(id)}, which the key file does not hold`);
    const aad = `${o.metadata.namespace}/${o.metadata.name}`;
    let values: { data?: unknown; stringData?: unknown };
    try {
      values = JSON.parse(ungcm(ungcm(key, wrapped, aad), payload, aad).toString("utf8"));
    } catch (e) {
      throw new SealError(`${o.metadata.namespace}/${o.metadata.name}: the sealed value does not open (${(e as Error).message})`);
    }
    const { [SEALED_FIELD]: _s, ...rest } = r;
    return { ...rest, ...(values.data !== undefined ? { data: values.data } : {}), ...(values.stringData !== undefined ? { stringData: values.stringData } : {}) } as unknown as T;
  }

  /** Whether the stored object is sealed with a key other than the current one (rotation). */
  stale(stored: KubeObject): boolean {
    const s = (stored as Record<string, unknown>)[SEALED_FIELD];
    return typeof s === "string" && s.split(":")[2] !== this.primary;
  }
}
