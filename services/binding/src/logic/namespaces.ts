import type { KubeObject } from "@flotilla/api";
import { ResourceTemplateClaimedByLabel } from "@flotilla/api";

/** Karmada's own namespaces: karmada-system, karmada-cluster and every execution space. */
export function isReservedNamespace(ns: string): boolean {
  return ns === "karmada-system" || ns === "karmada-cluster" || ns.startsWith("karmada-es-");
}

/** `--skipped-propagating-namespaces` entries are anchored regular expressions ("kube-.*"). */
export function compileSkippedNamespaces(patterns: readonly string[]): RegExp[] {
  return patterns.filter((p) => p.trim() !== "").map((p) => new RegExp(`^(?:${p.trim()})$`));
}

function skippedNamespace(ns: string, skipped: readonly RegExp[]): boolean {
  return isReservedNamespace(ns) || skipped.some((r) => r.test(ns));
}

/**
 * The detector's event filter: templates in reserved or skipped namespaces are never
 * propagated, nor are templates another controller claimed (`resourcetemplate.karmada.io/claimed-by`).
 * A Namespace object is judged by its own name as well (a reserved namespace is never propagated).
 */
export function isIgnoredTemplate(t: Pick<KubeObject, "kind" | "apiVersion" | "metadata">, skipped: readonly RegExp[]): boolean {
  const ns = t.metadata.namespace ?? "";
  if (ns && skippedNamespace(ns, skipped)) return true;
  if (!ns && t.kind === "Namespace" && t.apiVersion === "v1" && skippedNamespace(t.metadata.name ?? "", skipped)) return true;
  return !!t.metadata.labels?.[ResourceTemplateClaimedByLabel];
}

/** The same filter from a wake-up's coordinates, before reading the object. */
export function isIgnoredNamespace(namespace: string, skipped: readonly RegExp[]): boolean {
  return namespace !== "" && skippedNamespace(namespace, skipped);
}
