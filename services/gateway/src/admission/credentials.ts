import { SEALED_FIELD } from "@flotilla/store";
import { BadRequestError, type KubeObject } from "@flotilla/api";

/**
 * Member credentials through the gateway.
 *
 * A Cluster reaches its member with `spec.secretRef`, a Secret whose `data.token` is the bearer
 * token (and `data.caBundle` the CA), as `karmadactl join` writes it. Two ways in:
 *
 * 1. POST the Secret (`data` base64 or `stringData` plain), then the Cluster naming it.
 * 2. Put the token inline on the Cluster, in the annotation `cluster.flotilla.io/bearer-token`
 *    (optionally `cluster.flotilla.io/ca-bundle`, PEM). The gateway moves it into the Secret
 *    `karmada-cluster/<cluster>` (or the one spec.secretRef already names), sets spec.secretRef,
 *    and stores the Cluster without the annotations. An annotation rather than a new spec field
 *    keeps the Cluster plain Karmada JSON, so the strict decoding of typed kinds still applies and
 *    Karmada tooling reads the object unchanged.
 *
 * The gateway never returns a credential: every value of a Secret's `data` and `stringData` is
 * replaced by "" in every response and watch event, REST and gRPC alike (keys stay visible).
 * The inline annotations are never stored, so no Cluster response carries them. Because a
 * client may write back what it read, a Secret update whose `data` value is "" keeps the stored
 * value of that key (leave a key out to remove it). `stringData` is folded into `data` on every
 * write, as the Kubernetes API server does. A patch applies to the Secret as it is shown (values
 * blanked) and is then written as such a PUT (GuardedObjectApi.patchBase), so no patch operation
 * (`test`, `copy`, `move`) can read a value either.
 */
export const InlineTokenAnnotation = "cluster.flotilla.io/bearer-token";
export const InlineCABundleAnnotation = "cluster.flotilla.io/ca-bundle";
/** Where inline credentials go unless spec.secretRef names another Secret (karmadactl join's namespace). */
export const CredentialNamespace = "karmada-cluster";

export const REDACTED = "";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

export function isSecret(o: { apiVersion?: string; kind?: string } | undefined): boolean {
  return !!o && o.kind === "Secret" && (o.apiVersion === "v1" || o.apiVersion === undefined);
}

/** The object as the gateway may show it: a Secret's values blanked, anything else as it is. */
export function redact<T extends KubeObject | undefined>(o: T): T {
  if (!o || !isSecret(o)) return o;
  const out: Obj = { ...o };
  // a credential the store could not open (no key) shows no ciphertext either
  delete out[SEALED_FIELD];
  for (const field of ["data", "stringData"]) {
    const v = out[field];
    if (isObj(v)) out[field] = Object.fromEntries(Object.keys(v).map((k) => [k, REDACTED]));
  }
  return out as T;
}

/**
 * A Secret body ready to store: `stringData` folded into `data` (base64), and — on update —
 * every blanked value ("", as the gateway shows them) restored from the stored Secret.
 */
export function prepareSecret(body: unknown, stored: KubeObject | undefined): unknown {
  if (!isObj(body)) return body;
  const out: Obj = { ...body };
  const data: Record<string, unknown> = isObj(out.data) ? { ...out.data } : {};
  if (out.stringData !== undefined) {
    if (!isObj(out.stringData)) throw new BadRequestError("stringData must be a map of strings", [{ field: "stringData", reason: "FieldValueTypeInvalid", message: "must be a map of strings" }]);
    for (const [k, v] of Object.entries(out.stringData)) {
      if (typeof v !== "string") throw new BadRequestError(`stringData.${k} must be a string`, [{ field: `stringData.${k}`, reason: "FieldValueTypeInvalid", message: "must be a string" }]);
      data[k] = Buffer.from(v, "utf8").toString("base64");
    }
    delete out.stringData;
  }
  const storedData = isObj(stored?.data) ? (stored!.data as Obj) : {};
  for (const [k, v] of Object.entries(data)) {
    if (v === REDACTED && typeof storedData[k] === "string" && storedData[k] !== "") data[k] = storedData[k];
  }
  if (Object.keys(data).length || out.data !== undefined) out.data = data;
  return out;
}

export interface InlineCredential {
  token: string;
  caBundle?: string;
  /** The Secret the credential goes to. */
  secret: { namespace: string; name: string };
}

/**
 * Takes the inline credential annotations off a Cluster body: the body to store (annotations
 * removed, spec.secretRef set) and the credential to write, or undefined when there is none.
 */
export function extractInlineCredential(body: unknown, clusterName: string): { body: unknown; credential?: InlineCredential } {
  if (!isObj(body) || !isObj(body.metadata)) return { body };
  const meta = body.metadata as Obj;
  const ann = isObj(meta.annotations) ? (meta.annotations as Record<string, unknown>) : undefined;
  if (!ann || (ann[InlineTokenAnnotation] === undefined && ann[InlineCABundleAnnotation] === undefined)) return { body };
  const token = ann[InlineTokenAnnotation];
  const ca = ann[InlineCABundleAnnotation];
  if (typeof token !== "string" || token === "") {
    throw new BadRequestError(`the annotation ${InlineTokenAnnotation} must hold the member's bearer token`, [
      { field: `metadata.annotations[${InlineTokenAnnotation}]`, reason: "FieldValueRequired", message: "a non-empty bearer token is required" },
    ]);
  }
  if (ca !== undefined && typeof ca !== "string") {
    throw new BadRequestError(`the annotation ${InlineCABundleAnnotation} must be a PEM string`, [{ field: `metadata.annotations[${InlineCABundleAnnotation}]`, reason: "FieldValueTypeInvalid", message: "must be a string" }]);
  }
  const rest = { ...ann };
  delete rest[InlineTokenAnnotation];
  delete rest[InlineCABundleAnnotation];
  const spec: Obj = isObj(body.spec) ? { ...body.spec } : {};
  const ref = isObj(spec.secretRef) ? (spec.secretRef as Obj) : undefined;
  const secret = {
    namespace: typeof ref?.namespace === "string" && ref.namespace ? ref.namespace : CredentialNamespace,
    name: typeof ref?.name === "string" && ref.name ? ref.name : clusterName,
  };
  spec.secretRef = secret;
  const newMeta: Obj = { ...meta };
  if (Object.keys(rest).length) newMeta.annotations = rest;
  else delete newMeta.annotations;
  return { body: { ...body, metadata: newMeta, spec }, credential: { token, ...(ca ? { caBundle: ca } : {}), secret } };
}

/** The Secret holding an inline credential; one made here is owned by its Cluster when the Cluster's uid is known. */
export function credentialSecret(c: InlineCredential, cluster: { name: string; uid?: string }, existing?: KubeObject): KubeObject {
  const data: Record<string, string> = { ...((existing?.data as Record<string, string> | undefined) ?? {}), token: Buffer.from(c.token, "utf8").toString("base64") };
  if (c.caBundle) data.caBundle = Buffer.from(c.caBundle, "utf8").toString("base64");
  const owner = cluster.uid ? [{ apiVersion: "cluster.karmada.io/v1alpha1", kind: "Cluster", name: cluster.name, uid: cluster.uid }] : undefined;
  return {
    ...(existing ?? {}),
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      ...(existing?.metadata ?? {}),
      name: c.secret.name,
      namespace: c.secret.namespace,
      // only a Secret the gateway makes is owned (and so deleted with its Cluster); a user's own Secret is left as it is
      ...(owner && !existing ? { ownerReferences: owner } : {}),
    },
    type: (existing?.type as string | undefined) ?? "Opaque",
    data,
  };
}
