// validateObject: any object, dispatched by kind to the validation of that kind.
import { ObjectMetaSchema } from "@flotilla/proto";
import { jsonShapeErrors, schemaFor } from "../decode.js";
import { InvalidError, type FieldError } from "../errors.js";
import type { ResourceType } from "../resources.js";
import type { AnyOverridePolicy, AnyPropagationPolicy, AnyResourceBinding, Cluster, ClusterTaintPolicy, KubeObject, Work } from "../types.js";
import { workloadErrors } from "../workloads.js";
import { validateResourceBinding } from "./binding.js";
import { validateClusterTaintPolicy } from "./cluster-taint-policy.js";
import { validateCluster } from "./cluster.js";
import { fieldInvalid, validateObjectMeta } from "./fields.js";
import { validateOverridePolicy } from "./override-policy.js";
import { validatePropagationPolicy } from "./propagation-policy.js";
import { validateWork } from "./work.js";

/** Settings of the validating webhooks that change what they accept. */
export interface ValidateOptions {
  /** karmada-webhook's --allow-no-execute-taint-policy (default false). */
  allowNoExecuteTaintPolicy?: boolean;
}

/**
 * Validates an object of `resourceType` the way Karmada's validating webhooks and CRD schemas would,
 * throwing one InvalidError that lists every problem. Typed kinds are first checked against their proto
 * schema (so undecoded input fails cleanly); opaque templates get their metadata checked (the
 * types of the fields ObjectMeta defines, then the values) and, for workloads, the fields
 * Flotilla reads (workloads.ts).
 */
export function validateObject(resourceType: ResourceType, obj: KubeObject, opts: ValidateOptions = {}): void {
  const name = obj?.metadata?.name;
  const ref = { group: resourceType.group, kind: resourceType.kind, name: typeof name === "string" ? name : undefined };
  const schema = schemaFor(resourceType);
  if (schema) {
    const shape = jsonShapeErrors(schema, obj);
    if (shape.length) throw new InvalidError(ref, shape);
  }
  const errs: FieldError[] = [];
  if (obj.kind && obj.kind !== resourceType.kind) errs.push(fieldInvalid("kind", obj.kind, `must be "${resourceType.kind}"`));
  switch (schema ? resourceType.kind : "") {
    case "PropagationPolicy":
    case "ClusterPropagationPolicy":
      errs.push(...validatePropagationPolicy({ ...(obj as AnyPropagationPolicy), kind: resourceType.kind }));
      break;
    case "OverridePolicy":
    case "ClusterOverridePolicy":
      errs.push(...validateOverridePolicy({ ...(obj as AnyOverridePolicy), kind: resourceType.kind }));
      break;
    case "ClusterTaintPolicy":
      errs.push(...validateClusterTaintPolicy(obj as ClusterTaintPolicy, { allowNoExecute: opts.allowNoExecuteTaintPolicy }));
      break;
    case "ResourceBinding":
    case "ClusterResourceBinding":
      errs.push(...validateResourceBinding({ ...(obj as AnyResourceBinding), kind: resourceType.kind }));
      break;
    case "Work":
      errs.push(...validateWork(obj as Work));
      break;
    case "Cluster":
      errs.push(...validateCluster(obj as Cluster));
      break;
    default: {
      const shape = jsonShapeErrors(ObjectMetaSchema, obj.metadata ?? {}, "metadata", { unknownFields: "ignore" });
      if (shape.length) throw new InvalidError(ref, shape);
      errs.push(...validateObjectMeta(obj.metadata, resourceType), ...workloadErrors(obj));
    }
  }
  if (errs.length) throw new InvalidError(ref, errs);
}
