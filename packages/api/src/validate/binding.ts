// ResourceBinding and ClusterResourceBinding: sanity only (they are written by controllers).
import type { ResourceBindingSpecJson } from "@flotilla/proto";
import type { FieldError } from "../errors.js";
import type { AnyResourceBinding } from "../types.js";
import { child, fieldDuplicate, fieldInvalid, fieldRequired, index, oneOf, validateObjectMeta } from "./fields.js";
import { APPLICATION_PURGE_MODES, CONFLICT_RESOLUTIONS, LEGACY_APPLICATION_PURGE_MODES } from "./propagation-policy.js";

export function validateResourceBindingSpec(spec: ResourceBindingSpecJson | undefined, path = "spec"): FieldError[] {
  if (!spec) return [fieldRequired(path)];
  const errs: FieldError[] = [];
  const res = spec.resource;
  const rp = child(path, "resource");
  if (!res) errs.push(fieldRequired(rp));
  else {
    if (!res.apiVersion) errs.push(fieldRequired(child(rp, "apiVersion")));
    if (!res.kind) errs.push(fieldRequired(child(rp, "kind")));
    if (!res.name) errs.push(fieldRequired(child(rp, "name")));
  }
  if ((spec.replicas ?? 0) < 0) errs.push(fieldInvalid(child(path, "replicas"), spec.replicas, "must be greater than or equal to 0"));
  const seen = new Set<string>();
  (spec.clusters ?? []).forEach((c, i) => {
    const p = index(child(path, "clusters"), i);
    if (!c.name) errs.push(fieldRequired(child(p, "name")));
    else if (seen.has(c.name)) errs.push(fieldDuplicate(child(p, "name"), c.name));
    if (c.name) seen.add(c.name);
    if ((c.replicas ?? 0) < 0) errs.push(fieldInvalid(child(p, "replicas"), c.replicas, "must be greater than or equal to 0"));
  });
  (spec.gracefulEvictionTasks ?? []).forEach((t, i) => {
    const p = index(child(path, "gracefulEvictionTasks"), i);
    if (!t.fromCluster) errs.push(fieldRequired(child(p, "fromCluster")));
    oneOf(errs, child(p, "purgeMode"), t.purgeMode, [...APPLICATION_PURGE_MODES, ...LEGACY_APPLICATION_PURGE_MODES]);
    if (t.gracePeriodSeconds !== undefined && t.gracePeriodSeconds <= 0) errs.push(fieldInvalid(child(p, "gracePeriodSeconds"), t.gracePeriodSeconds, "must be greater than 0"));
  });
  (spec.requiredBy ?? []).forEach((r, i) => {
    if (!r.name) errs.push(fieldRequired(child(index(child(path, "requiredBy"), i), "name")));
  });
  oneOf(errs, child(path, "conflictResolution"), spec.conflictResolution, CONFLICT_RESOLUTIONS);
  return errs;
}

export function validateResourceBinding(rb: AnyResourceBinding): FieldError[] {
  const namespaced = rb.kind !== "ClusterResourceBinding";
  return [
    ...validateObjectMeta(rb.metadata, { group: "work.karmada.io", kind: rb.kind, namespaced }),
    ...validateResourceBindingSpec(rb.spec as ResourceBindingSpecJson | undefined),
  ];
}
