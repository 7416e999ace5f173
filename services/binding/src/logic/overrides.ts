import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { storedTemplateErrors, type AnyOverridePolicy, type Cluster, type FieldError, type KubeObject, type Overriders, type RuleWithCluster } from "@flotilla/api";
import { clusterMatches } from "@flotilla/scheduling";
import { ImplicitPriority, selectorsPriority } from "./selectors.js";

// Karmada's overridemanager (pkg/util/overridemanager) and imageparser, as pure functions.

type Json = unknown;
type Obj = Record<string, Json>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** An override that cannot be applied to a manifest (a missing path, an unparsable image, …). */
export class OverrideError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "OverrideError";
  }
}

// ---------------------------------------------------------------------------------------------
// Selection

type Template = Pick<KubeObject, "apiVersion" | "kind" | "metadata">;

/** Implicit priority of a policy for a template: no selectors = MatchAll (1), else the best selector; 0 = no match. */
export function overridePriority(t: Template, p: AnyOverridePolicy): number {
  const selectors = p.spec?.resourceSelectors ?? [];
  if (selectors.length === 0) return ImplicitPriority.MatchAll;
  return selectorsPriority(t, selectors);
}

const byteCompare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The policies of one group that apply to a template, in the order they are applied: implicit
 * priority ascending, then name (so the most specific policy is applied last and wins).
 */
export function matchingOverridePolicies<P extends AnyOverridePolicy>(t: Template, policies: readonly P[]): P[] {
  return policies
    .map((p) => ({ p, prio: overridePriority(t, p) }))
    .filter((x) => x.prio > ImplicitPriority.MisMatch && !x.p.metadata.deletionTimestamp)
    .sort((a, b) => a.prio - b.prio || byteCompare(a.p.metadata.name ?? "", b.p.metadata.name ?? ""))
    .map((x) => x.p);
}

/** The rules of a policy: overrideRules, or the deprecated targetCluster/overriders pair as the only rule. */
export function overrideRules(p: AnyOverridePolicy): RuleWithCluster[] {
  const rules = p.spec?.overrideRules ?? [];
  if (rules.length > 0) return rules;
  const rule: RuleWithCluster = { overriders: p.spec?.overriders ?? {} };
  if (p.spec?.targetCluster) rule.targetCluster = p.spec.targetCluster;
  return [rule];
}

/** Whether a policy (in any of its rules) needs the Cluster object to decide. */
export function needsCluster(policies: readonly AnyOverridePolicy[]): boolean {
  return policies.some((p) => overrideRules(p).some((r) => r.targetCluster));
}

/** One applied rule: the policy's name and the overriders of one of its rules that match the cluster. */
export interface OverrideEntry {
  policyName: string;
  overriders: Overriders;
}

/**
 * The entries for one cluster, in application order: each rule (in order) of each policy (in
 * the order given) whose targetCluster is unset or matches the cluster. `cluster` is needed
 * only when a rule has a targetCluster; without it that is an error.
 */
export function overrideEntries(policies: readonly AnyOverridePolicy[], clusterName: string, cluster: Cluster | undefined): OverrideEntry[] {
  const out: OverrideEntry[] = [];
  for (const p of policies) {
    for (const r of overrideRules(p)) {
      if (r.targetCluster) {
        if (!cluster) throw new OverrideError(`cluster(${clusterName}) not found`);
        if (!clusterMatches(cluster, r.targetCluster)) continue;
      }
      out.push({ policyName: p.metadata.name ?? "", overriders: r.overriders ?? {} });
    }
  }
  return out;
}

/** Label and annotation maps with their keys sorted, as Go's encoding/json writes a map. */
function sortedMaps(o: Overriders): Overriders {
  const sortMap = (m: Record<string, string> | undefined) => (m ? Object.fromEntries(Object.entries(m).sort(([a], [b]) => byteCompare(a, b))) : m);
  const out: Overriders = { ...o };
  if (o.labelsOverrider) out.labelsOverrider = o.labelsOverrider.map((x) => ({ ...x, value: sortMap(x.value) }));
  if (o.annotationsOverrider) out.annotationsOverrider = o.annotationsOverrider.map((x) => ({ ...x, value: sortMap(x.value) }));
  return out;
}

/**
 * The applied-overrides annotation value: `[{"policyName","overriders"}]`, one item per entry
 * (stable-sorted by policy name), fields in the API's order; undefined when there are none.
 */
export function appliedOverridesAnnotation(entries: readonly OverrideEntry[]): string | undefined {
  if (entries.length === 0) return undefined;
  const items = entries.map((e) => ({ policyName: e.policyName, overriders: sortedMaps(e.overriders) })).sort((a, b) => byteCompare(a.policyName, b.policyName));
  return JSON.stringify(items);
}

// ---------------------------------------------------------------------------------------------
// JSON patch (RFC 6902 add/remove/replace as evanphx/json-patch v5 applies them)

export interface PatchOp {
  op: string;
  path: string;
  value?: Json;
}

const FORBIDDEN = new Set(["__proto__", "constructor", "prototype"]);

function tokens(path: string): string[] {
  if (path === "") return [];
  if (!path.startsWith("/")) throw new OverrideError(`invalid JSON pointer ${JSON.stringify(path)}`);
  return path
    .slice(1)
    .split("/")
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
}

function arrayIndex(token: string, size: number, path: string): number {
  if (!/^-?[0-9]+$/.test(token)) throw new OverrideError(`${JSON.stringify(token)} is not an array index: ${path}`);
  let i = Number(token);
  if (i >= size || i < -size) throw new OverrideError(`index ${token} out of range: ${path}`);
  if (i < 0) i += size;
  return i;
}

/** The container of a path's last token, which must exist (parents are never created). */
function containerOf(doc: Json, segs: string[], path: string, op: string): Obj | Json[] {
  let cur: Json = doc;
  for (const s of segs.slice(0, -1)) {
    if (FORBIDDEN.has(s)) throw new OverrideError(`${op} operation does not apply: ${JSON.stringify(s)} may not be used as a field name: ${path}`);
    if (Array.isArray(cur)) cur = /^-?[0-9]+$/.test(s) && Number(s) < cur.length && Number(s) >= -cur.length ? cur[Number(s) < 0 ? cur.length + Number(s) : Number(s)] : undefined;
    else if (isObj(cur)) cur = Object.hasOwn(cur, s) ? cur[s] : undefined;
    else cur = undefined;
    if (cur === undefined) throw new OverrideError(`${op} operation does not apply: doc is missing path: ${path}`);
  }
  if (!Array.isArray(cur) && !isObj(cur)) throw new OverrideError(`${op} operation does not apply: doc is missing path: ${path}`);
  const last = segs[segs.length - 1]!;
  if (FORBIDDEN.has(last)) throw new OverrideError(`${op} operation does not apply: ${JSON.stringify(last)} may not be used as a field name: ${path}`);
  return cur;
}

/**
 * Applies the operations in order to a copy of `doc` and returns it; the first that does not
 * apply throws and nothing is changed. `add` onto an existing member replaces it; `replace`
 * and `remove` need the member to exist; a missing value is `null`; negative indices count
 * from the end.
 */
export function applyJsonPatch<T>(doc: T, ops: readonly PatchOp[]): T {
  let out: Json = structuredClone(doc);
  for (const o of ops) {
    const value = o.value === undefined ? null : structuredClone(o.value);
    const segs = tokens(o.path);
    if (segs.length === 0) {
      if (o.op === "remove") throw new OverrideError("remove operation does not apply: the whole document cannot be removed");
      if (o.op !== "add" && o.op !== "replace") throw new OverrideError(`unsupported operation ${JSON.stringify(o.op)}`);
      out = value;
      continue;
    }
    const c = containerOf(out, segs, o.path, o.op);
    const last = segs[segs.length - 1]!;
    switch (o.op) {
      case "add":
        if (Array.isArray(c)) c.splice(last === "-" ? c.length : arrayIndex(last, c.length + 1, o.path), 0, value);
        else c[last] = value;
        break;
      case "remove":
      case "replace":
        if (Array.isArray(c)) {
          const i = arrayIndex(last, c.length, o.path);
          if (o.op === "remove") c.splice(i, 1);
          else c[i] = value;
        } else {
          if (!Object.hasOwn(c, last)) throw new OverrideError(`${o.op} operation does not apply: doc is missing key: ${o.path}`);
          if (o.op === "remove") delete c[last];
          else c[last] = value;
        }
        break;
      default:
        throw new OverrideError(`unsupported operation ${JSON.stringify(o.op)}`);
    }
  }
  return out as T;
}

/** The value at a JSON pointer, or undefined. */
function getPointer(doc: Json, path: string): Json | undefined {
  let cur: Json = doc;
  for (const s of tokens(path)) {
    if (Array.isArray(cur)) cur = /^[0-9]+$/.test(s) ? cur[Number(s)] : undefined;
    else if (isObj(cur)) cur = Object.hasOwn(cur, s) ? cur[s] : undefined;
    else return undefined;
    if (cur === undefined) return undefined;
  }
  return cur;
}

const escapeToken = (k: string) => k.replace(/~/g, "~0").replace(/\//g, "~1");

// ---------------------------------------------------------------------------------------------
// Image references (pkg/util/imageparser over distribution/reference, without normalisation)

export interface ImageComponents {
  hostname: string;
  repository: string;
  tag: string;
  digest: string;
}

const ALNUM = "[a-z0-9]+";
const SEPARATOR = "(?:[._]|__|[-]+)";
const PATH_COMPONENT = `${ALNUM}(?:${SEPARATOR}${ALNUM})*`;
const DOMAIN_COMPONENT = "(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])";
const DOMAIN = `(?:${DOMAIN_COMPONENT}(?:\\.${DOMAIN_COMPONENT})*|\\[[a-fA-F0-9:]+\\])(?::[0-9]+)?`;
const TAG = "[\\w][\\w.-]{0,127}";
const DIGEST = "[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}";
const NAME = `(?:${DOMAIN}/)?${PATH_COMPONENT}(?:/${PATH_COMPONENT})*`;
const REFERENCE = new RegExp(`^(${NAME})(?::(${TAG}))?(?:@(${DIGEST}))?$`);
const TAG_RE = new RegExp(`^${TAG}$`);
const DIGEST_RE = new RegExp(`^${DIGEST}$`);
const NAME_TOTAL_LENGTH_MAX = 255;

/** imageparser.Parse: the reference grammar; tag kept and digest dropped when both are present. */
export function parseImage(image: string): ImageComponents {
  if (image.length === 0) throw new Error("repository name must have at least one component");
  const m = REFERENCE.exec(image);
  if (!m) {
    if (REFERENCE.exec(image.toLowerCase())) throw new Error("repository name must be lowercase");
    throw new Error("invalid reference format");
  }
  const name = m[1]!;
  if (name.length > NAME_TOTAL_LENGTH_MAX) throw new Error(`repository name must not be more than ${NAME_TOTAL_LENGTH_MAX} characters`);
  const i = name.indexOf("/");
  const host = i >= 0 ? name.slice(0, i) : "";
  const isHost = i >= 0 && (/[.:]/.test(host) || host === "localhost");
  return { hostname: isHost ? host : "", repository: isHost ? name.slice(i + 1) : name, tag: m[2] ?? "", digest: m[2] ? "" : (m[3] ?? "") };
}

export function imageString(c: ImageComponents): string {
  let s = c.hostname ? `${c.hostname}/${c.repository}` : c.repository;
  if (c.tag) s += `:${c.tag}`;
  else if (c.digest) s += `@${c.digest}`;
  return s;
}

/** SetTagOrDigest: a tag when it looks like one, else a digest when it looks like one, else nothing. */
function setTagOrDigest(c: ImageComponents, v: string): void {
  if (TAG_RE.test(v)) {
    c.tag = v;
    c.digest = "";
  } else if (DIGEST_RE.test(v)) {
    c.digest = v;
    c.tag = "";
  }
}

type ImageOverrider = NonNullable<Overriders["imageOverrider"]>[number];

/** One image overrider applied to one image reference. */
export function overrideImage(image: string, o: ImageOverrider): string {
  let c: ImageComponents;
  try {
    c = parseImage(image);
  } catch (e) {
    throw new OverrideError(`failed to parse image value(${image}), error: ${(e as Error).message}`, { cause: e });
  }
  const value = o.value ?? "";
  switch (o.component) {
    case "Registry":
      if (o.operator === "add") c.hostname += value;
      else if (o.operator === "replace") c.hostname = value;
      else if (o.operator === "remove") c.hostname = "";
      break;
    case "Repository":
      if (o.operator === "add") c.repository += value;
      else if (o.operator === "replace") c.repository = value;
      else if (o.operator === "remove") c.repository = "";
      break;
    case "Tag":
      if (o.operator === "add") setTagOrDigest(c, (c.tag || c.digest) + value);
      else if (o.operator === "replace") setTagOrDigest(c, value);
      else if (o.operator === "remove") {
        if (c.tag) c.tag = "";
        else c.digest = "";
      }
      break;
  }
  return imageString(c);
}

// ---------------------------------------------------------------------------------------------
// Overriders → patches

const POD_TEMPLATE_KINDS = new Set(["Deployment", "ReplicaSet", "DaemonSet", "StatefulSet", "Job"]);

/** The JSON pointer of the containers list the default image/command/args overriders use, by kind; undefined for other kinds. */
function containersPath(m: Obj): string | undefined {
  if (m.kind === "Pod") return "/spec/containers";
  if (typeof m.kind === "string" && POD_TEMPLATE_KINDS.has(m.kind)) return "/spec/template/spec/containers";
  return undefined;
}

function containers(m: Obj): { path: string; items: Obj[] } | undefined {
  const path = containersPath(m);
  if (!path) return undefined;
  const list = getPointer(m, path);
  return { path, items: Array.isArray(list) ? list.map((c) => (isObj(c) ? c : {})) : [] };
}

/** The image at a predicate path: maps descend, a list takes the next segment as an index, the end is a string. */
function imageAtPredicate(m: Obj, path: string): string {
  const segs = path.replace(/^\/+|\/+$/g, "").split("/");
  let cur: Json = m;
  const fail = (why: string) => new OverrideError(`failed to obtain imageValue with predicate path(${path}), error: ${why}`);
  for (let i = 0; i < segs.length; i++) {
    const s = segs[i]!;
    if (isObj(cur)) {
      if (!Object.hasOwn(cur, s)) throw fail(`${s} is not found`);
      cur = cur[s];
    } else if (Array.isArray(cur)) {
      if (!/^[0-9]+$/.test(s) || Number(s) >= cur.length) throw fail(`${s} is not a valid index`);
      cur = cur[Number(s)];
      if (!isObj(cur) && i < segs.length - 1) throw fail(`${s} is not an object`);
    } else {
      throw fail(`${segs.slice(0, i).join("/")} is not an object`);
    }
  }
  if (typeof cur !== "string") throw fail(`${path} is not a string`);
  return cur;
}

function imagePatches(m: Obj, o: ImageOverrider): PatchOp[] {
  if (o.predicate) {
    const path = o.predicate.path ?? "";
    if (!path.startsWith("/")) throw new OverrideError(`predicate path(${path}) must start with /`);
    return [{ op: "replace", path, value: overrideImage(imageAtPredicate(m, path), o) }];
  }
  const cs = containers(m);
  if (!cs) return [];
  return cs.items.map((c, i) => ({ op: "replace", path: `${cs.path}/${i}/image`, value: overrideImage(typeof c.image === "string" ? c.image : "", o) }));
}

type CommandArgsOverrider = NonNullable<Overriders["commandOverrider"]>[number];

function commandArgsPatches(m: Obj, o: CommandArgsOverrider, field: "command" | "args"): PatchOp[] {
  const cs = containers(m);
  if (!cs) return [];
  const out: PatchOp[] = [];
  const value = o.value ?? [];
  cs.items.forEach((c, i) => {
    if (c.name !== o.containerName) return;
    const path = `${cs.path}/${i}/${field}`;
    const cur = c[field];
    if (!Array.isArray(cur)) {
      out.push({ op: "add", path, value: o.operator === "add" ? [...value] : [] });
      return;
    }
    const next = o.operator === "add" ? [...cur, ...value] : o.operator === "remove" ? cur.filter((x) => !value.includes(x as string)) : cur;
    out.push({ op: "replace", path, value: next });
  });
  return out;
}

type LabelAnnotationOverrider = NonNullable<Overriders["labelsOverrider"]>[number];

/** Patches for labels or annotations; `add` creates the map first (on the object itself, as upstream). */
function labelAnnotationPatches(m: Obj, o: LabelAnnotationOverrider, field: "labels" | "annotations"): PatchOp[] {
  const out: PatchOp[] = [];
  const meta = isObj(m.metadata) ? m.metadata : undefined;
  for (const [k, v] of Object.entries(o.value ?? {})) {
    const cur = meta && isObj(meta[field]) ? (meta[field] as Obj) : undefined;
    if (o.operator === "remove" || o.operator === "replace") {
      if (!cur || !Object.hasOwn(cur, k)) continue;
    } else if (o.operator === "add" && !cur) {
      if (!isObj(m.metadata)) m.metadata = {};
      (m.metadata as Obj)[field] = {};
    }
    out.push({ op: o.operator ?? "", path: `/metadata/${field}/${escapeToken(k)}`, value: v });
  }
  return out;
}

type FieldOverrider = NonNullable<Overriders["fieldOverrider"]>[number];

/** `<>&` as Go's encoding/json writes them. */
const goJson = (v: Json) => JSON.stringify(v).replace(/[<>&]/g, (c) => `\\u00${c.charCodeAt(0).toString(16)}`);

function fieldPatch(m: Obj, o: FieldOverrider): PatchOp[] {
  const fieldPath = o.fieldPath ?? "";
  const cur = getPointer(m, fieldPath);
  if (cur === undefined) throw new OverrideError(`failed to get value by fieldPath(${fieldPath}): path does not exist`);
  if (typeof cur !== "string") throw new OverrideError(`the value of fieldPath(${fieldPath}) is not string`);
  let value = "";
  if ((o.yaml?.length ?? 0) > 0) {
    let doc: Json;
    try {
      doc = parseYaml(cur) as Json;
    } catch (e) {
      throw new OverrideError(`failed to convert the value of fieldPath(${fieldPath}) from YAML: ${(e as Error).message}`, { cause: e });
    }
    const patched = applyJsonPatch(doc, (o.yaml ?? []).map((x) => ({ op: x.operator ?? "", path: x.subPath ?? "", value: x.value })));
    value = stringifyYaml(patched, { sortMapEntries: true, indentSeq: false });
  } else if ((o.json?.length ?? 0) > 0) {
    let doc: Json;
    try {
      doc = JSON.parse(cur) as Json;
    } catch (e) {
      throw new OverrideError(`failed to parse the value of fieldPath(${fieldPath}) as JSON: ${(e as Error).message}`, { cause: e });
    }
    value = goJson(applyJsonPatch(doc, (o.json ?? []).map((x) => ({ op: x.operator ?? "", path: x.subPath ?? "", value: x.value }))));
  }
  return [{ op: "replace", path: fieldPath, value }];
}

/**
 * One rule's overriders applied to a manifest (returned as a new object), in upstream's
 * order: image, command, args, labels, annotations, field, then the plaintext list as one
 * patch. Every other overrider item is its own patch; the first that fails throws.
 */
export function applyOverriders<T extends object>(manifest: T, o: Overriders): T {
  let m = structuredClone(manifest) as unknown as Obj;
  const step = (ops: PatchOp[]) => {
    if (ops.length) m = applyJsonPatch(m, ops);
  };
  for (const x of o.imageOverrider ?? []) step(imagePatches(m, x));
  for (const x of o.commandOverrider ?? []) step(commandArgsPatches(m, x, "command"));
  for (const x of o.argsOverrider ?? []) step(commandArgsPatches(m, x, "args"));
  for (const x of o.labelsOverrider ?? []) step(labelAnnotationPatches(m, x, "labels"));
  for (const x of o.annotationsOverrider ?? []) step(labelAnnotationPatches(m, x, "annotations"));
  for (const x of o.fieldOverrider ?? []) step(fieldPatch(m, x));
  step((o.plaintext ?? []).map((p) => ({ op: p.operator ?? "", path: p.path ?? "", value: p.value })));
  return m as unknown as T;
}

/** The overrides of one cluster: cluster policies' entries first, then namespaced ones. */
export interface ClusterOverrides {
  cluster: OverrideEntry[];
  namespaced: OverrideEntry[];
}

type Scope = "cluster override policy" | "override policy";
interface ScopedEntry {
  scope: Scope;
  entry: OverrideEntry;
}

/**
 * The problems of a manifest as the gateway sees a template's: `storedTemplateErrors`, the type
 * rules of its metadata and the workload fields Flotilla and the members read (a container's
 * requests and limits as Kubernetes' quantity parser takes them, counts, the node claim, …).
 */
function manifestErrors(m: object): FieldError[] {
  return storedTemplateErrors(m as Parameters<typeof storedTemplateErrors>[0]);
}

const errorKey = (e: FieldError) => `${e.field}\u0000${e.message}`;

/**
 * Applies every entry in order; an error names the policy whose rule failed. The result is then
 * checked as the gateway checks a template (`manifestErrors`): an override that writes what
 * Kubernetes would refuse (a request of `"1Gi "`, replicas `"3"`, labels that are a list, …)
 * throws an OverrideError naming, per policy that wrote it, the manifest's field and why, and no
 * Work carries the manifest. This is the general check: admission can refuse only what is
 * certain from a policy alone (a plaintext value at a container's resource quantity path),
 * while what an override writes depends on the template (the field overrider's and image
 * overrider's results, a plaintext `add` of a whole `resources` object, a policy stored before
 * a rule existed) and is only known here. Problems the manifest had before the overrides are not
 * theirs and are not reported (the binding controller refuses such a template before it renders).
 */
export function applyOverrides<T extends object>(manifest: T, o: ClusterOverrides): T {
  const entries: ScopedEntry[] = [
    ...o.cluster.map((entry) => ({ scope: "cluster override policy" as const, entry })),
    ...o.namespaced.map((entry) => ({ scope: "override policy" as const, entry })),
  ];
  if (entries.length === 0) return manifest;
  const steps: T[] = [];
  let m = manifest;
  for (const { scope, entry: e } of entries) {
    try {
      m = applyOverriders(m, e.overriders);
    } catch (err) {
      if (!(err instanceof OverrideError)) throw err;
      throw new OverrideError(`failed to apply ${scope}(${e.policyName}): ${err.message}`, { cause: err });
    }
    steps.push(m);
  }
  const before = new Set(manifestErrors(manifest).map(errorKey));
  const invalid = manifestErrors(m).filter((e) => !before.has(errorKey(e)));
  if (invalid.length) throw invalidOverride(manifest, before, entries, steps, invalid);
  return m;
}

/**
 * The OverrideError for a rendered manifest with `invalid` problems: each is put on the entry
 * after which it (last) appeared, replaying the intermediate manifests (only on this failure
 * path), and the message lists them per policy in application order.
 */
function invalidOverride<T extends object>(manifest: T, before: ReadonlySet<string>, entries: readonly ScopedEntry[], steps: readonly T[], invalid: readonly FieldError[]): OverrideError {
  const introducedBy = new Map<string, number>();
  let prev = before;
  steps.forEach((step, i) => {
    const now = new Set(manifestErrors(step).map(errorKey));
    for (const k of now) if (!prev.has(k)) introducedBy.set(k, i);
    prev = now;
  });
  const byEntry = new Map<number, FieldError[]>();
  for (const e of invalid) {
    const i = introducedBy.get(errorKey(e)) ?? entries.length - 1;
    byEntry.set(i, [...(byEntry.get(i) ?? []), e]);
  }
  const kind = typeof (manifest as { kind?: unknown }).kind === "string" ? (manifest as { kind: string }).kind : "manifest";
  const parts = [...byEntry.entries()]
    .sort(([a], [b]) => a - b)
    .map(([i, errs]) => {
      const { scope, entry } = entries[i]!;
      return `failed to apply ${scope}(${entry.policyName}): the overridden ${kind} is invalid: ${errs.map((e) => `${e.field}: ${e.message}`).join(", ")}`;
    });
  return new OverrideError(parts.join("; "));
}
