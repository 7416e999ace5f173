import { KARMADA, type Cluster, type KubeObject } from "@flotilla/api";
import type { Connection } from "./kubeconfig.js";

/** Where Karmada keeps member credentials (karmadactl join: Secret `<cluster>` in this namespace). */
export const CREDENTIAL_NAMESPACE = "karmada-cluster";

export interface JoinOptions {
  name: string;
  provider?: string;
  region?: string;
  zone?: string;
  labels?: Record<string, string>;
}

/**
 * What `flotilla join` writes for a Push member, as karmadactl join does: the Secret
 * `karmada-cluster/<name>` with the member kubeconfig's bearer token (and its CA as caBundle),
 * and the Cluster pointing at the member's server through spec.secretRef. `member` is the member
 * kubeconfig's connection with its token and CA already read.
 */
export function joinObjects(member: Connection & { token: string }, o: JoinOptions): { secret: KubeObject; cluster: Cluster } {
  const b64 = (s: string) => Buffer.from(s, "utf8").toString("base64");
  const secret: KubeObject = {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: o.name, namespace: CREDENTIAL_NAMESPACE },
    type: "Opaque",
    data: { token: b64(member.token), ...(member.caData ? { caBundle: b64(member.caData) } : {}) },
  };
  const cluster: Cluster = {
    apiVersion: `${KARMADA.cluster.group}/${KARMADA.cluster.version}`,
    kind: "Cluster",
    metadata: { name: o.name, ...(o.labels && Object.keys(o.labels).length ? { labels: o.labels } : {}) },
    spec: {
      syncMode: "Push",
      apiEndpoint: member.server,
      secretRef: { namespace: CREDENTIAL_NAMESPACE, name: o.name },
      ...(member.insecure ? { insecureSkipTLSVerification: true } : {}),
      ...(o.provider ? { provider: o.provider } : {}),
      ...(o.region ? { region: o.region } : {}),
      ...(o.zone ? { zones: [o.zone] } : {}),
    },
  };
  return { secret, cluster };
}

/** `a=b,c=d` as labels; a malformed pair is named. */
export function parseLabels(s: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (s ?? "").split(",").filter(Boolean)) {
    const eq = part.indexOf("=");
    if (eq <= 0) throw new Error(`invalid label ${JSON.stringify(part)}: want key=value`);
    out[part.slice(0, eq)] = part.slice(eq + 1);
  }
  return out;
}
