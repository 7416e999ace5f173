import {
  BadRequestError,
  InvalidError,
  KARMADA,
  decodeTyped,
  fieldDuplicate,
  fieldInvalid,
  fieldRequired,
  rfc3339,
  validateResourceBindingSpec,
  type AnyResourceBinding,
  type Cluster,
  type FieldError,
} from "@flotilla/api";
import type { ScheduleResult } from "@flotilla/scheduling";
import { SCHEDULED } from "./status.js";

export const SIMULATION_GROUP = "scheduling.flotilla.io";
export const SIMULATION_API_VERSION = `${SIMULATION_GROUP}/v1alpha1`;
export const SIMULATION_KIND = "Simulation";

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** A validated simulation request. */
export interface Simulation {
  /** The object as posted (echoed back with `status`). */
  request: Json;
  binding: AnyResourceBinding;
  /** The inline cluster snapshot; undefined means "the current clusters". */
  clusters?: Cluster[];
}

export interface SimulationStatus {
  clusters: Array<{ name: string; replicas: number }>;
  diagnosis: Record<string, Array<{ plugin: string; reason: string }>>;
  scores: Array<{ name: string; score: number }>;
  conditions: Array<{ type: string; status: string; reason: string; message: string; lastTransitionTime: string }>;
}

const SPEC_FIELDS = new Set(["clusters", "binding"]);
const BINDING_FIELDS = new Set(["apiVersion", "kind", "metadata", "spec", "status"]);

/** Re-roots the field paths of a nested decode error. */
function under(prefix: string, e: unknown): FieldError[] {
  if (e instanceof InvalidError) return e.causes.map((c) => ({ ...c, field: c.field ? `${prefix}.${c.field}` : prefix }));
  throw e;
}

function unknownFields(obj: Json, known: Set<string>, path: string): FieldError[] {
  return Object.keys(obj)
    .filter((k) => !known.has(k))
    .map((k) => ({ field: `${path}.${k}`, reason: "FieldValueUnknown" as const, message: `unknown field "${k}"` }));
}

/**
 * Checks a Simulation request and decodes the clusters and the binding in it as strictly as the
 * API does for stored objects. Throws BadRequestError for a body that is not an object, and one
 * InvalidError listing every bad field (`spec.binding.spec.placement`, `spec.clusters[1].metadata.name`, …).
 */
export function parseSimulation(body: unknown): Simulation {
  if (!isObj(body)) throw new BadRequestError("the request body must be a Simulation object", [{ field: "", reason: "FieldValueTypeInvalid", message: "expected an object" }]);
  const name = isObj(body.metadata) && typeof body.metadata.name === "string" ? body.metadata.name : undefined;
  const errs: FieldError[] = [];
  if (body.apiVersion === undefined || body.apiVersion === "") errs.push(fieldRequired("apiVersion", `must be "${SIMULATION_API_VERSION}"`));
  else if (body.apiVersion !== SIMULATION_API_VERSION) errs.push(fieldInvalid("apiVersion", body.apiVersion, `must be "${SIMULATION_API_VERSION}"`));
  if (body.kind === undefined || body.kind === "") errs.push(fieldRequired("kind", `must be "${SIMULATION_KIND}"`));
  else if (body.kind !== SIMULATION_KIND) errs.push(fieldInvalid("kind", body.kind, `must be "${SIMULATION_KIND}"`));
  if (body.metadata !== undefined && !isObj(body.metadata)) errs.push(fieldInvalid("metadata", body.metadata, "must be an object"));

  let clusters: Cluster[] | undefined;
  let binding: AnyResourceBinding | undefined;
  const spec = body.spec;
  if (spec === undefined) errs.push(fieldRequired("spec"));
  else if (!isObj(spec)) errs.push(fieldInvalid("spec", spec, "must be an object"));
  else {
    errs.push(...unknownFields(spec, SPEC_FIELDS, "spec"));
    if (spec.clusters !== undefined && spec.clusters !== null) {
      if (!Array.isArray(spec.clusters)) errs.push(fieldInvalid("spec.clusters", spec.clusters, "must be a list of Cluster objects"));
      else {
        clusters = [];
        const seen = new Set<string>();
        spec.clusters.forEach((c: unknown, i: number) => {
          const p = `spec.clusters[${i}]`;
          if (!isObj(c)) return void errs.push(fieldInvalid(p, c, "must be a Cluster object"));
          let decoded: Cluster;
          try {
            decoded = decodeTyped(KARMADA.cluster, c) as Cluster;
          } catch (e) {
            return void errs.push(...under(p, e));
          }
          const n = decoded.metadata.name;
          if (!n) return void errs.push(fieldRequired(`${p}.metadata.name`));
          if (seen.has(n)) return void errs.push(fieldDuplicate(`${p}.metadata.name`, n));
          seen.add(n);
          clusters!.push(decoded);
        });
      }
    }
    const b = spec.binding;
    const bp = "spec.binding";
    if (b === undefined) errs.push(fieldRequired(bp));
    else if (!isObj(b)) errs.push(fieldInvalid(bp, b, "must be an object with metadata, spec and status"));
    else {
      errs.push(...unknownFields(b, BINDING_FIELDS, bp));
      const type = b.kind === KARMADA.clusterResourceBinding.kind ? KARMADA.clusterResourceBinding : KARMADA.resourceBinding;
      if (b.spec === undefined) errs.push(fieldRequired(`${bp}.spec`));
      else {
        try {
          const { apiVersion, kind, metadata, status } = b;
          const obj = {
            ...(apiVersion !== undefined ? { apiVersion } : {}),
            ...(kind !== undefined ? { kind } : {}),
            metadata: metadata ?? {},
            spec: b.spec,
            ...(status !== undefined ? { status } : {}),
          };
          binding = decodeTyped(type, obj) as AnyResourceBinding;
        } catch (e) {
          errs.push(...under(bp, e));
        }
        if (binding) {
          errs.push(...validateResourceBindingSpec(binding.spec, `${bp}.spec`));
          if (!binding.spec?.placement) errs.push(fieldRequired(`${bp}.spec.placement`));
        }
      }
    }
  }
  if (errs.length || !binding) throw new InvalidError({ group: SIMULATION_GROUP, kind: SIMULATION_KIND, name }, errs);
  return { request: body, binding, ...(clusters ? { clusters } : {}) };
}

/** The Simulation's status: where the binding would go, why each other cluster was left out, the scores, the condition. */
export function simulationStatus(result: ScheduleResult, now: Date): SimulationStatus {
  const c = result.condition;
  return {
    clusters: result.clusters.map((t) => ({ name: t.name ?? "", replicas: t.replicas ?? 0 })),
    diagnosis: Object.fromEntries(Object.entries(result.diagnosis).map(([n, rs]) => [n, rs.map((r) => ({ plugin: r.plugin, reason: r.reason }))])),
    scores: result.scores.map((s) => ({ name: s.name, score: s.score })),
    conditions: [{ type: SCHEDULED, status: c.status, reason: c.reason, message: c.message, lastTransitionTime: rfc3339(now) }],
  };
}

/** The request echoed back with its status. */
export function simulationResponse(sim: Simulation, result: ScheduleResult, now: Date): Json {
  return { ...sim.request, status: simulationStatus(result, now) };
}
