import { BadRequestError, matchesRequirements, parseSelector, type Requirement } from "@flotilla/api";

/** One term of a field selector ("status.phase!=Running"). */
export interface FieldRequirement {
  field: string;
  op: "=" | "!=";
  value: string;
}

/**
 * Parses `?fieldSelector=` ("metadata.name=x,status.phase!=Succeeded"). Any dotted path is
 * accepted, which is more lenient than a real API server (it allows a few fields per kind).
 */
export function parseFieldSelector(s: string): FieldRequirement[] {
  const out: FieldRequirement[] = [];
  for (const term of s.split(",")) {
    const t = term.trim();
    if (!t) continue;
    const m = /^([A-Za-z0-9._-]+)\s*(==|!=|=)\s*(.*)$/.exec(t);
    if (!m) {
      throw new BadRequestError(`invalid field selector: ${JSON.stringify(t)}`, [
        { field: "fieldSelector", reason: "FieldValueInvalid", message: `expected field=value or field!=value, got ${JSON.stringify(t)}` },
      ]);
    }
    out.push({ field: m[1]!, op: m[2] === "!=" ? "!=" : "=", value: m[3]!.trim() });
  }
  return out;
}

/** The value at a dotted path as a string; a missing field reads as "". */
export function fieldValue(obj: unknown, path: string): string {
  let cur: unknown = obj;
  for (const part of path.split(".")) {
    if (typeof cur !== "object" || cur === null) return "";
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur === undefined || cur === null ? "" : String(cur);
}

export function matchesFields(obj: unknown, reqs: FieldRequirement[]): boolean {
  for (const r of reqs) {
    const v = fieldValue(obj, r.field);
    if (r.op === "=" ? v !== r.value : v === r.value) return false;
  }
  return true;
}

type Labeled = { metadata?: { labels?: Record<string, string> } };

/**
 * A predicate for a list request's label and field selectors (either may be empty).
 * Label selectors use @flotilla/api's parser, so both sides of the project agree on the syntax.
 */
export function listFilter(labelSelector?: string, fieldSelector?: string): ((obj: Labeled) => boolean) | undefined {
  const labels: Requirement[] = labelSelector ? parseSelector(labelSelector) : [];
  const fields = fieldSelector ? parseFieldSelector(fieldSelector) : [];
  if (labels.length === 0 && fields.length === 0) return undefined;
  return (obj) => matchesRequirements(obj.metadata?.labels, labels) && matchesFields(obj, fields);
}
