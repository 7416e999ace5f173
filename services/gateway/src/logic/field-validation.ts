import { InvalidError } from "@flotilla/api";

/**
 * Kubernetes' `fieldValidation` query parameter of POST, PUT and PATCH: what happens to fields the
 * kind's schema does not know. Strict refuses the request naming them, Warn drops them and warns
 * (a `Warning` header each), Ignore drops them. Only Flotilla's own kinds have such fields: the
 * built-in kinds keep whatever they hold.
 */
export type FieldValidation = "Strict" | "Warn" | "Ignore";

const VALUES: readonly string[] = ["Ignore", "Strict", "Warn"];

/**
 * The directive of a request. Absent or empty is Strict: Flotilla refuses unknown fields unless
 * asked otherwise (kube-apiserver's default is Warn; kubectl sends Strict unless --validate says
 * otherwise). Any other value is a 422 naming the parameter, as kube-apiserver answers it.
 */
export function fieldValidation(value: string | undefined, options: "CreateOptions" | "UpdateOptions" | "PatchOptions"): FieldValidation {
  if (value === undefined || value === "") return "Strict";
  if (VALUES.includes(value)) return value as FieldValidation;
  throw new InvalidError({ group: "meta.k8s.io", kind: options }, [
    { field: "fieldValidation", reason: "FieldValueNotSupported", message: `Unsupported value: ${JSON.stringify(value)}: supported values: ${VALUES.map((v) => JSON.stringify(v)).join(", ")}` },
  ]);
}

/** An HTTP `Warning` header value as kube-apiserver writes it (code 299, no agent), which kubectl prints as "Warning: <text>". */
export function warningHeader(text: string): string {
  return `299 - ${JSON.stringify(text)}`;
}
