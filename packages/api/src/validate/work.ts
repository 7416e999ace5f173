// Work: sanity only (it is written by controllers): every manifest names its apiVersion, kind and
// name, and a workload's fields are checked as a template's are (workloads.ts).
import type { FieldError } from "../errors.js";
import type { KubeObject, Work } from "../types.js";
import { workloadErrors } from "../workloads.js";
import { child, fieldRequired, index, validateObjectMeta } from "./fields.js";

export function validateWork(work: Work): FieldError[] {
  const errs = validateObjectMeta(work.metadata, { group: "work.karmada.io", kind: "Work", namespaced: true });
  (work.spec?.workload?.manifests ?? []).forEach((m, i) => {
    const p = index("spec.workload.manifests", i);
    const manifest = m as Record<string, unknown>;
    if (typeof manifest.apiVersion !== "string" || !manifest.apiVersion) errs.push(fieldRequired(child(p, "apiVersion")));
    if (typeof manifest.kind !== "string" || !manifest.kind) errs.push(fieldRequired(child(p, "kind")));
    const meta = manifest.metadata as Record<string, unknown> | undefined;
    if (typeof meta?.name !== "string" || !meta.name) errs.push(fieldRequired(child(child(p, "metadata"), "name")));
    errs.push(...workloadErrors(manifest as KubeObject, p));
  });
  return errs;
}
