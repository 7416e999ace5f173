/**
 * Request documents: the one decoder of what clients send (JSON and YAML bodies, every patch
 * type, the objects of gRPC calls). Whatever the format, a document is accepted only as plain
 * JSON data that can be stored and patched safely:
 *
 * - only null, booleans, finite numbers, strings, arrays and plain objects (YAML's `.inf`,
 *   `!!binary`, `!!set`, timestamps and the like are refused);
 * - no string and no key holds a NUL (`\u0000`) or an unpaired UTF-16 surrogate (Postgres stores
 *   neither);
 * - no key is `__proto__`: assigned as a field name, it replaces an object's prototype (no
 *   Kubernetes or Karmada schema uses it; the price is that a ConfigMap or label key of that
 *   name is refused too). `constructor` and `prototype` are ordinary keys in a document (a
 *   ConfigMap may hold them): everything that walks a document follows own properties only.
 *   In a JSON patch's `path` and `from` all three are refused (PATCH_FORBIDDEN_SEGMENTS);
 * - at most MAX_DOCUMENT_DEPTH levels of nesting, so nothing downstream (defaulting, patching,
 *   cloning) can run out of stack, and every object can be read back over gRPC.
 *
 * Syntax errors are a BadRequestError (400); every other problem an InvalidError (422) naming the
 * fields (at most MAX_DOCUMENT_ERRORS of them).
 */
import { Composer, Lexer, Parser, type Document } from "yaml";
import { BadRequestError, InvalidError, type FieldError, type ResourceRef } from "./errors.js";

/**
 * Levels of nesting a document may have (the object itself is level 1). Kubernetes objects stay
 * far below it (a Deployment about 12, Karmada's deepest CRD about 24). The number is what gRPC
 * allows: protobuf readers stop at 100 nested messages (protobuf-es, C++, Java and Python by
 * default), google.protobuf.Struct spends two per JSON level, and a template inside a Work, the
 * deepest place one travels (WatchEvent, Object, Work, WorkSpec, WorkloadTemplate), six more: 47
 * levels is the most every client can read.
 */
export const MAX_DOCUMENT_DEPTH = 47;
/** Bytes a request may carry, Kubernetes' default request limit (3 MiB). */
export const MAX_REQUEST_BYTES = 3 * 1024 * 1024;
/** Problems reported for one document at most; the rest are left out. */
export const MAX_DOCUMENT_ERRORS = 20;
/** The field name that replaces an object's prototype when assigned. */
export const FORBIDDEN_KEYS: ReadonlySet<string> = new Set(["__proto__"]);
/** Segments a JSON patch path may not go through: the names that lead to a prototype when followed. */
export const PATCH_FORBIDDEN_SEGMENTS: ReadonlySet<string> = new Set(["__proto__", "constructor", "prototype"]);

export type DocumentFormat = "json" | "yaml";

/** An unpaired high surrogate, or a low surrogate without its high half. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why `s` cannot be stored (it holds a NUL or an unpaired surrogate), or undefined when it can. */
export function stringProblem(s: string): string | undefined {
  if (s.includes("\u0000")) return "must not contain NUL characters (\\u0000)";
  if (LONE_SURROGATE.test(s)) return "must be valid Unicode (it has an unpaired UTF-16 surrogate)";
  return undefined;
}

/** The error for a field name that is one of FORBIDDEN_KEYS. */
export function forbiddenKeyError(field: string, key: string): FieldError {
  return { field, reason: "FieldValueForbidden", message: `Forbidden: ${JSON.stringify(key)} may not be used as a field name` };
}

const child = (path: string, key: string) => (path ? `${path}.${key}` : key);

function describe(v: unknown): string {
  if (v === undefined) return "undefined";
  if (typeof v === "number") return String(v);
  if (typeof v === "object" && v !== null) return (v as object).constructor?.name ?? "object";
  return typeof v;
}

function isPlainObject(v: object): boolean {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/**
 * Every way `value` is not a safe JSON document (see the module comment), with `path` naming the
 * fields like `spec.template.metadata.labels` and `items[3]`. Empty when it is one.
 */
export function documentErrors(value: unknown, path = ""): FieldError[] {
  const errs: FieldError[] = [];
  const visit = (v: unknown, p: string, depth: number): void => {
    if (errs.length >= MAX_DOCUMENT_ERRORS) return;
    switch (typeof v) {
      case "boolean":
        return;
      case "string": {
        const why = stringProblem(v);
        if (why) errs.push({ field: p, reason: "FieldValueInvalid", message: `Invalid value: ${why}` });
        return;
      }
      case "number":
        if (!Number.isFinite(v)) errs.push({ field: p, reason: "FieldValueInvalid", message: `Invalid value: ${v}: must be a finite number` });
        return;
      case "object":
        if (v === null) return;
        if (depth >= MAX_DOCUMENT_DEPTH) {
          errs.push({ field: p, reason: "FieldValueInvalid", message: `Invalid value: nested more than ${MAX_DOCUMENT_DEPTH} levels deep` });
          return;
        }
        if (Array.isArray(v)) {
          for (let i = 0; i < v.length && errs.length < MAX_DOCUMENT_ERRORS; i++) visit(v[i], `${p}[${i}]`, depth + 1);
          return;
        }
        if (isPlainObject(v)) {
          for (const k of Object.keys(v)) {
            if (errs.length >= MAX_DOCUMENT_ERRORS) return;
            const kp = child(p, k);
            const why = stringProblem(k);
            if (why) errs.push({ field: kp, reason: "FieldValueInvalid", message: `Invalid value: the field name ${why}` });
            else if (FORBIDDEN_KEYS.has(k)) errs.push(forbiddenKeyError(kp, k));
            else visit((v as Record<string, unknown>)[k], kp, depth + 1);
          }
          return;
        }
    }
    errs.push({ field: p, reason: "FieldValueTypeInvalid", message: `Invalid value: ${describe(v)}: must be a JSON value (null, boolean, number, string, array or object)` });
  };
  visit(value, path, 0);
  return errs;
}

/** Throws an InvalidError about `ref` listing documentErrors(value), if there are any. */
export function checkDocument(value: unknown, ref: ResourceRef): void {
  const errs = documentErrors(value);
  if (errs.length) throw new InvalidError(ref, errs);
}

/**
 * How much deeper than the document the YAML parser's stack runs (the document itself, a
 * collection's pending value): text nested beyond MAX_DOCUMENT_DEPTH plus this is refused as it
 * is read.
 */
const YAML_STACK_SLACK = 8;

/**
 * YAML text as a value: one document in the 1.2 core schema, without merge keys, at most 100
 * alias expansions. The parser (iterative) is watched as it reads, so text nested deeper than
 * the document limit never reaches the composer, which recurses: a few thousand levels overflow
 * the stack, and an overflow inside V8's regular-expression compiler aborts the process. Keys
 * are not checked for uniqueness (the last one wins, as JSON.parse does): yaml's check is
 * quadratic, tens of seconds for a 3 MiB map.
 */
function parseYaml(text: string): unknown {
  const options = { schema: "core", merge: false, uniqueKeys: false, logLevel: "error" } as const;
  const lexer = new Lexer();
  const parser = new Parser();
  function* tokens() {
    for (const lexeme of lexer.lex(text)) {
      yield* parser.next(lexeme);
      if (parser.stack.length > MAX_DOCUMENT_DEPTH + YAML_STACK_SLACK) throw new Error(`nested more than ${MAX_DOCUMENT_DEPTH} levels deep`);
    }
    yield* parser.end();
  }
  let doc: Document.Parsed | undefined;
  for (const d of new Composer(options).compose(tokens(), true, text.length)) {
    if (doc) throw new Error("the body holds more than one YAML document");
    doc = d;
  }
  if (doc!.errors.length) throw doc!.errors[0];
  return doc!.toJS({ maxAliasCount: 100 });
}

/** Parses JSON or YAML text; a syntax error (or input the parser cannot handle) is a BadRequestError. */
export function parseDocument(text: string, format: DocumentFormat): unknown {
  try {
    if (format === "json") return JSON.parse(text);
    // JSON is YAML: a body that parses as JSON (what kubectl sends, server-side apply included) skips the slower YAML parser
    if (/^\s*[[{]/.test(text)) {
      try {
        return JSON.parse(text);
      } catch {
        // YAML flow style, not JSON
      }
    }
    return parseYaml(text);
  } catch (e) {
    const first = e instanceof Error ? e.message.split("\n")[0]!.slice(0, 200) : String(e);
    throw new BadRequestError(`the request body is not valid ${format === "yaml" ? "YAML" : "JSON"}: ${first}`, [], { cause: e });
  }
}

/**
 * Decodes a request body about `ref`: parsed as `format`, then checked as a safe JSON document
 * (BadRequestError for bad syntax or a body that is not an object or a list, InvalidError naming
 * the fields otherwise). Empty text is undefined.
 */
export function decodeDocument(text: string, format: DocumentFormat, ref: ResourceRef): unknown {
  if (text === "") return undefined;
  const value = parseDocument(text, format);
  if (typeof value !== "object" || value === null) throw new BadRequestError(`the request body must be a JSON object (or a list, for a JSON patch), not ${value === null ? "null" : typeof value}`);
  checkDocument(value, ref);
  return value;
}
