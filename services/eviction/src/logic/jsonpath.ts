/**
 * The subset of Kubernetes' JSONPath templates (k8s.io/client-go/util/jsonpath) that state
 * preservation rules use: literal text and `{ … }` actions made of an optional `$`, fields
 * (`.name`, `['name']`, `["name"]`), array indexes (`[0]`, `[-1]`) and wildcards (`[*]`, `.*`).
 * As upstream with AllowMissingKeys(false), a missing field or index is an error; several
 * results of one action are joined by a space; strings print as they are, other values as JSON.
 * `range`, filters, slices and recursive descent are not supported (a parse error).
 */
export class JsonPathError extends Error {
  override readonly name = "JsonPathError";
}

type Step = { kind: "field"; name: string } | { kind: "index"; index: number } | { kind: "all" };
type Part = { text: string } | { steps: Step[] };

const FIELD = /^[A-Za-z0-9_-]+/;

function parseAction(src: string, template: string): Step[] {
  let s = src.trim();
  if (s.startsWith("$")) s = s.slice(1);
  const steps: Step[] = [];
  while (s.length) {
    if (s.startsWith("..")) throw new JsonPathError(`unsupported recursive descent in ${JSON.stringify(template)}`);
    if (s[0] === ".") {
      s = s.slice(1);
      if (s[0] === "*") {
        steps.push({ kind: "all" });
        s = s.slice(1);
        continue;
      }
      const m = FIELD.exec(s);
      if (!m) {
        if (s.length === 0 && steps.length === 0) break; // "{.}" is the whole object
        throw new JsonPathError(`invalid field in ${JSON.stringify(template)}`);
      }
      steps.push({ kind: "field", name: m[0] });
      s = s.slice(m[0].length);
      continue;
    }
    if (s[0] === "[") {
      const end = s.indexOf("]");
      if (end < 0) throw new JsonPathError(`unclosed [ in ${JSON.stringify(template)}`);
      const inner = s.slice(1, end).trim();
      s = s.slice(end + 1);
      const quoted = /^'([^']*)'$|^"([^"]*)"$/.exec(inner);
      if (quoted) steps.push({ kind: "field", name: quoted[1] ?? quoted[2] ?? "" });
      else if (inner === "*") steps.push({ kind: "all" });
      else if (/^-?\d+$/.test(inner)) steps.push({ kind: "index", index: Number(inner) });
      else throw new JsonPathError(`unsupported [${inner}] in ${JSON.stringify(template)}`);
      continue;
    }
    throw new JsonPathError(`unrecognized character in action: ${JSON.stringify(s)} in ${JSON.stringify(template)}`);
  }
  return steps;
}

/** Splits a template into literal text and actions; throws JsonPathError when it cannot be parsed. */
export function parseJsonPath(template: string): Part[] {
  const parts: Part[] = [];
  let i = 0;
  while (i < template.length) {
    const open = template.indexOf("{", i);
    if (open < 0) {
      parts.push({ text: template.slice(i) });
      break;
    }
    if (open > i) parts.push({ text: template.slice(i, open) });
    const close = template.indexOf("}", open);
    if (close < 0) throw new JsonPathError(`unclosed action in ${JSON.stringify(template)}`);
    const inner = template.slice(open + 1, close).trim();
    if (/^(range|end)\b/.test(inner) || inner.includes("?(")) throw new JsonPathError(`unsupported action {${inner}} in ${JSON.stringify(template)}`);
    parts.push({ steps: parseAction(inner, template) });
    i = close + 1;
  }
  return parts;
}

function walk(values: unknown[], step: Step): unknown[] {
  const out: unknown[] = [];
  for (const v of values) {
    if (step.kind === "field") {
      if (v === null || typeof v !== "object" || Array.isArray(v) || !(step.name in v)) throw new JsonPathError(`${step.name} is not found`);
      out.push((v as Record<string, unknown>)[step.name]);
    } else if (step.kind === "index") {
      if (!Array.isArray(v)) throw new JsonPathError(`[${step.index}] is not an array index of a list`);
      const i = step.index < 0 ? v.length + step.index : step.index;
      if (i < 0 || i >= v.length) throw new JsonPathError("array index out of bounds");
      out.push(v[i]);
    } else if (Array.isArray(v)) out.push(...v);
    else if (v !== null && typeof v === "object") out.push(...Object.keys(v).sort().map((k) => (v as Record<string, unknown>)[k]));
  }
  return out;
}

function print(v: unknown): string {
  return typeof v === "string" ? v : JSON.stringify(v);
}

/** Renders `template` against `data` (see the module comment); throws JsonPathError. */
export function evalJsonPath(template: string, data: unknown): string {
  let out = "";
  for (const p of parseJsonPath(template)) {
    if ("text" in p) out += p.text;
    else out += p.steps.reduce<unknown[]>(walk, [data]).map(print).join(" ");
  }
  return out;
}
