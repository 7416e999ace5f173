import type { Cluster, KubeObject } from "@flotilla/api";
import type { MemberEndpoint } from "@flotilla/kube";

/** The Secret keys Karmada's join writes (karmadactl join: Secret `<cluster>` in `karmada-cluster`). */
export const TokenKey = "token";
export const CABundleKey = "caBundle";

export type EndpointResult = { ok: true; endpoint: MemberEndpoint } | { ok: false; reason: string };

function secretValue(secret: KubeObject, key: string): string | undefined {
  const data = secret.data as Record<string, string> | undefined;
  const v = data?.[key];
  if (typeof v === "string" && v !== "") return Buffer.from(v, "base64").toString("utf8");
  const sd = secret.stringData as Record<string, string> | undefined;
  const s = sd?.[key];
  return typeof s === "string" && s !== "" ? s : undefined;
}

/**
 * How to reach a member: `spec.apiEndpoint`, the bearer token and CA bundle of the Secret
 * `spec.secretRef` names (`data.token` base64, or `stringData.token`; `caBundle` likewise),
 * `spec.insecureSkipTLSVerification` and `spec.proxyURL`. The reason never contains a secret value.
 */
export function endpointOf(cluster: Cluster, secret: KubeObject | undefined): EndpointResult {
  const spec = cluster.spec ?? {};
  if (!spec.apiEndpoint) return { ok: false, reason: "the cluster has no spec.apiEndpoint" };
  const ref = spec.secretRef;
  let token: string | undefined;
  let caData: string | undefined;
  if (ref?.name) {
    if (!secret) return { ok: false, reason: `the secret ${ref.namespace}/${ref.name} named by spec.secretRef does not exist` };
    token = secretValue(secret, TokenKey);
    caData = secretValue(secret, CABundleKey);
    if (!token) return { ok: false, reason: `the secret ${ref.namespace}/${ref.name} has no ${TokenKey}` };
  }
  return {
    ok: true,
    endpoint: {
      server: spec.apiEndpoint,
      ...(token ? { token } : {}),
      ...(caData ? { caData } : {}),
      ...(spec.insecureSkipTLSVerification ? { insecureSkipTLSVerify: true } : {}),
      ...(spec.proxyURL ? { proxyURL: spec.proxyURL } : {}),
    },
  };
}
