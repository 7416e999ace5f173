// The reference of every Karmada kind and field the gateway accepts, as Markdown, from the same
// OpenAPI documents kubectl reads (so from the proto descriptors and their doc comments): what
// docs/karmada-api.md holds, checked against the code by a test.
import { RESOURCE_TYPES, type ResourceType } from "@flotilla/api";
import { kindSchemaName } from "./openapi.js";

type Schema = { $ref?: string; allOf?: Schema[]; type?: string; description?: string; properties?: Record<string, Schema>; items?: Schema; additionalProperties?: Schema | boolean; enum?: unknown[] };

const refName = (s: Schema): string | undefined => (s.$ref ?? s.allOf?.find((x) => x.$ref)?.$ref)?.replace("#/components/schemas/", "");
const oneLine = (d: string | undefined) => (d ?? "").replace(/\s+/g, " ").trim().replace(/\|/g, "\\|");

/** Kubernetes' own types (ObjectMeta, LabelSelector, …) are named, not expanded: their fields are Kubernetes'. */
const isKubernetesType = (name: string) => name.startsWith("io.k8s.");

/** `type` as the reference prints it: object names shortened to their last segment. */
function typeOf(s: Schema, schemas: Record<string, Schema>): string {
  const name = refName(s);
  if (name) return name.slice(name.lastIndexOf(".") + 1);
  if (s.type === "array" && s.items) return `[]${typeOf(s.items, schemas)}`;
  if (s.type === "object" && s.additionalProperties && typeof s.additionalProperties === "object") return `map[string]${typeOf(s.additionalProperties, schemas)}`;
  return s.type ?? "any";
}

/** Every field path below `s` (depth first, in declaration order), with its type and description. */
function fields(s: Schema, path: string, schemas: Record<string, Schema>, seen: string[], out: string[]): void {
  const name = refName(s);
  const target = name ? schemas[name] : s;
  if (!target) return;
  if (name && (isKubernetesType(name) || seen.includes(name))) return;
  const next = name ? [...seen, name] : seen;
  if (target.type === "array" && target.items) return fields(target.items, `${path}[]`, schemas, next, out);
  if (target.additionalProperties && typeof target.additionalProperties === "object") return fields(target.additionalProperties, `${path}{}`, schemas, next, out);
  for (const [f, p] of Object.entries(target.properties ?? {})) {
    const at = path ? `${path}.${f}` : f;
    out.push(`| \`${at}\` | ${typeOf(p, schemas)} | ${oneLine(p.description)} |`);
    fields(p, at, schemas, next, out);
  }
}

/** The Markdown reference of the typed (Karmada) kinds in `doc` (the merged OpenAPI document). */
export function apiReference(doc: { components: { schemas: Record<string, Schema> } }, types: readonly ResourceType[] = RESOURCE_TYPES): string {
  const schemas = doc.components.schemas;
  const lines = [
    "# Karmada API reference",
    "",
    "Every Karmada kind and field Flotilla accepts, generated from the OpenAPI documents the gateway serves",
    "(`/openapi/v3`, built from `proto/` and its doc comments). A field not listed here is refused with a 422",
    "naming it (`fieldValidation=Strict`, the default). Kubernetes' own types (ObjectMeta, LabelSelector,",
    "Toleration, …) are named, not expanded. Differences from Karmada's behaviour are listed in the",
    "README's \"Differences from Karmada\" section. Regenerate with",
    "`UPDATE_API_REFERENCE=1 node --conditions=source --import tsx --test services/gateway/src/api-reference.test.ts`.",
    "",
  ];
  for (const t of types.filter((r) => r.typed)) {
    const s = schemas[kindSchemaName(t)];
    if (!s) continue;
    lines.push(`## ${t.kind}`, "", `\`${t.group}/${t.version}\`, ${t.namespaced ? "namespaced" : "cluster-scoped"}, \`${t.plural}\`${t.statusSubresource ? " (with `/status`)" : ""}. ${oneLine(s.description)}`, "");
    lines.push("| field | type | description |", "|---|---|---|");
    const out: string[] = [];
    for (const top of ["spec", "status"]) {
      const p = s.properties?.[top];
      if (!p) continue;
      out.push(`| \`${top}\` | ${typeOf(p, schemas)} | ${oneLine(p.description)} |`);
      fields(p, top, schemas, [kindSchemaName(t)], out);
    }
    lines.push(...out, "");
  }
  return lines.join("\n");
}
