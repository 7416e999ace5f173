import { RESOURCE_TYPES, apiVersionOf, type ResourceType } from "@flotilla/api";
import { PLACEMENT_HISTORY_API_VERSION, PLACEMENT_HISTORY_KIND, hasPlacementHistory } from "./placement-history.js";

const VERBS = ["create", "delete", "get", "list", "patch", "update", "watch"];

/** Every served group with its versions, in a stable order (core first). */
export function groups(types: readonly ResourceType[] = RESOURCE_TYPES): Map<string, string[]> {
  const m = new Map<string, string[]>();
  for (const t of types) {
    const vs = m.get(t.group) ?? [];
    if (!vs.includes(t.version)) vs.push(t.version);
    m.set(t.group, vs);
  }
  return m;
}

export function apiVersions() {
  return { kind: "APIVersions", versions: ["v1"], serverAddressByClientCIDRs: [{ clientCIDR: "0.0.0.0/0", serverAddress: "" }] };
}

export function apiGroup(group: string, versions: string[]) {
  const vs = versions.map((v) => ({ groupVersion: `${group}/${v}`, version: v }));
  return { kind: "APIGroup", apiVersion: "v1", name: group, versions: vs, preferredVersion: vs[0] };
}

export function apiGroupList(types: readonly ResourceType[] = RESOURCE_TYPES) {
  return {
    kind: "APIGroupList",
    apiVersion: "v1",
    groups: [...groups(types)].filter(([g]) => g !== "").map(([g, vs]) => apiGroup(g, vs)),
  };
}

export function apiResourceList(group: string, version: string, types: readonly ResourceType[] = RESOURCE_TYPES) {
  const resources: Array<Record<string, unknown>> = [];
  for (const t of types) {
    if (t.group !== group || t.version !== version) continue;
    resources.push({ name: t.plural, singularName: t.singular, namespaced: t.namespaced, kind: t.kind, verbs: VERBS, ...(t.shortNames ? { shortNames: t.shortNames } : {}) });
    if (t.statusSubresource) resources.push({ name: `${t.plural}/status`, singularName: "", namespaced: t.namespaced, kind: t.kind, verbs: ["get", "patch", "update"] });
    if (hasPlacementHistory(t)) {
      const [group, version] = PLACEMENT_HISTORY_API_VERSION.split("/") as [string, string];
      resources.push({ name: `${t.plural}/history`, singularName: "", namespaced: t.namespaced, group, version, kind: PLACEMENT_HISTORY_KIND, verbs: ["get"] });
    }
  }
  return { kind: "APIResourceList", apiVersion: "v1", groupVersion: apiVersionOf({ group, version }), resources };
}
