import { readFileSync } from "node:fs";
import { KubeConfig } from "@kubernetes/client-node";
import type { MemberEndpoint } from "@flotilla/kube";

/**
 * How to reach the member: its kubeconfig (current context; token and CA inline or in files),
 * else an explicit server with token and CA files, else the pod's in-cluster credentials.
 */
export function memberEndpoint(o: { kubeconfig: string; server: string; tokenFile: string; caFile: string; inClusterRoot?: string }): MemberEndpoint {
  if (!o.kubeconfig && o.server) {
    return {
      server: o.server,
      ...(o.tokenFile ? { token: readFileSync(o.tokenFile, "utf8").trim() } : {}),
      ...(o.caFile ? { caData: readFileSync(o.caFile, "utf8") } : {}),
    };
  }
  const kc = new KubeConfig();
  if (o.kubeconfig) kc.loadFromFile(o.kubeconfig);
  else kc.loadFromCluster(o.inClusterRoot);
  const cluster = kc.getCurrentCluster();
  const user = kc.getCurrentUser();
  if (!cluster) throw new Error(`the member kubeconfig ${o.kubeconfig || "(in-cluster)"} has no current cluster`);
  const provider = user?.authProvider as { name?: string; config?: { "access-token"?: string; tokenFile?: string } } | undefined;
  // in-cluster credentials name the ServiceAccount token's file (read at start: a restart picks up a rotated one)
  const fromFile = provider?.name === "tokenFile" && provider.config?.tokenFile ? readFileSync(provider.config.tokenFile, "utf8").trim() : undefined;
  const token = user?.token ?? provider?.config?.["access-token"] ?? fromFile;
  const caData = cluster.caData ? Buffer.from(cluster.caData, "base64").toString("utf8") : cluster.caFile ? readFileSync(cluster.caFile, "utf8") : undefined;
  return {
    server: cluster.server,
    ...(token ? { token } : {}),
    ...(caData ? { caData } : {}),
    ...(cluster.skipTLSVerify ? { insecureSkipTLSVerify: true } : {}),
    ...(cluster.proxyUrl ? { proxyURL: cluster.proxyUrl } : {}),
  };
}
