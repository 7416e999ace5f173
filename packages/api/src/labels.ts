import { BadRequestError } from "./errors.js";
import type { LabelSelector } from "./types.js";

/** One parsed requirement of a label selector. */
export interface Requirement {
  key: string;
  operator: "In" | "NotIn" | "Exists" | "DoesNotExist";
  values: string[];
}

/**
 * Parses the string form used by `?labelSelector=` ("app=nginx,tier in (web,api),!legacy").
 * Throws BadRequestError naming the selector on bad syntax.
 */
export function parseSelector(s: string): Requirement[] {
  const out: Requirement[] = [];
  const text = s.trim();
  if (!text) return out;
  let i = 0;
  const fail = (msg: string): never => {
    throw new BadRequestError(`unable to parse requirement: ${msg}`, [
      { field: "labelSelector", reason: "FieldValueInvalid", message: msg },
    ]);
  };
  const skipWs = () => {
    while (i < text.length && text[i] === " ") i++;
  };
  const word = (): string => {
    skipWs();
    const m = /^[A-Za-z0-9._/-]*/.exec(text.slice(i))!;
    i += m[0].length;
    return m[0];
  };
  while (i < text.length) {
    skipWs();
    if (text[i] === "!") {
      i++;
      const key = word();
      if (!key) fail(`missing key after '!' in ${JSON.stringify(s)}`);
      out.push({ key, operator: "DoesNotExist", values: [] });
    } else {
      const key = word();
      if (!key) fail(`expected a label key at position ${i} in ${JSON.stringify(s)}`);
      skipWs();
      const rest = text.slice(i);
      if (rest.startsWith("==") || rest.startsWith("!=") || rest.startsWith("=")) {
        const op = rest.startsWith("!=") ? "NotIn" : "In";
        i += rest.startsWith("=") && !rest.startsWith("==") ? 1 : 2;
        out.push({ key, operator: op, values: [word()] });
      } else if (/^(in|notin)\s*\(/.test(rest)) {
        const op = rest.startsWith("in") ? "In" : "NotIn";
        i += op === "In" ? 2 : 5;
        skipWs();
        i++; // (
        const close = text.indexOf(")", i);
        if (close < 0) fail(`missing ')' in ${JSON.stringify(s)}`);
        const values = text
          .slice(i, close)
          .split(",")
          .map((v) => v.trim());
        i = close + 1;
        out.push({ key, operator: op, values });
      } else if (rest === "" || rest.startsWith(",")) {
        out.push({ key, operator: "Exists", values: [] });
      } else {
        fail(`unexpected ${JSON.stringify(rest[0])} at position ${i} in ${JSON.stringify(s)}`);
      }
    }
    skipWs();
    if (i < text.length) {
      if (text[i] !== ",") fail(`expected ',' at position ${i} in ${JSON.stringify(s)}`);
      i++;
    }
  }
  return out;
}

/** The structured LabelSelector (matchLabels + matchExpressions) as requirements. */
export function selectorRequirements(sel: LabelSelector | undefined): Requirement[] {
  if (!sel) return [];
  const reqs: Requirement[] = Object.entries(sel.matchLabels ?? {}).map(([key, v]) => ({ key, operator: "In", values: [v] }));
  for (const e of sel.matchExpressions ?? []) {
    reqs.push({ key: e.key ?? "", operator: e.operator as Requirement["operator"], values: e.values ?? [] });
  }
  return reqs;
}

export function matchesRequirements(labels: Record<string, string> | undefined, reqs: Requirement[]): boolean {
  const l = labels ?? {};
  for (const r of reqs) {
    const has = Object.prototype.hasOwnProperty.call(l, r.key);
    switch (r.operator) {
      case "In":
        if (!has || !r.values.includes(l[r.key]!)) return false;
        break;
      case "NotIn":
        if (has && r.values.includes(l[r.key]!)) return false;
        break;
      case "Exists":
        if (!has) return false;
        break;
      case "DoesNotExist":
        if (has) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}

/** Kubernetes semantics: a nil selector matches nothing, an empty one matches everything. */
export function matchesSelector(labels: Record<string, string> | undefined, sel: LabelSelector | undefined): boolean {
  if (!sel) return false;
  return matchesRequirements(labels, selectorRequirements(sel));
}
