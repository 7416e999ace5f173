import { test } from "node:test";
import assert from "node:assert/strict";
import { BadRequestError, InvalidError, MAX_DOCUMENT_DEPTH, MAX_DOCUMENT_ERRORS, decodeDocument, documentErrors, stringProblem, type DocumentFormat } from "@flotilla/api";

const REF = { group: "apps", kind: "Deployment", name: "web" };
const nest = (levels: number) => JSON.parse('{"a":'.repeat(levels) + "1" + "}".repeat(levels));

// ---- documentErrors: [case, document, fields of the errors (in order), reasons] ----
const cases: Array<[string, unknown, string[], string?]> = [
  ["a plain object with every JSON type is a document", { a: null, b: true, c: 1.5, d: "x", e: [1, { f: [] }], g: {} }, []],
  ["emoji and other paired surrogates are fine", { a: "ä漢字🙂" }, []],
  ["a NUL in a string names its field", { metadata: { labels: { a: "x\u0000" } } }, ["metadata.labels.a"], "FieldValueInvalid"],
  ["a lone high surrogate names its field", { spec: { x: ["ok", "\ud800"] } }, ["spec.x[1]"], "FieldValueInvalid"],
  ["a lone low surrogate names its field", { a: "\udc00x" }, ["a"]],
  ["a NUL in a field name names that field", { metadata: { "a\u0000": 1 } }, ["metadata.a\u0000"]],
  ["a __proto__ key is forbidden", JSON.parse('{"spec":{"__proto__":{"polluted":1}}}'), ["spec.__proto__"], "FieldValueForbidden"],
  ["constructor and prototype are ordinary keys (a ConfigMap may hold them)", { data: { constructor: "1" }, prototype: 2 }, []],
  ["an inherited name that is not forbidden is an ordinary field", { toString: "x", hasOwnProperty: 1 }, []],
  ["infinite numbers (YAML .inf) are refused", { a: Infinity, b: NaN }, ["a", "b"]],
  ["values JSON has no form for are refused", { a: new Date(0), b: new Uint8Array(1), c: new Set(), d: undefined, e: 1n }, ["a", "b", "c", "d", "e"], "FieldValueTypeInvalid"],
  [`exactly ${MAX_DOCUMENT_DEPTH} levels of nesting are allowed`, nest(MAX_DOCUMENT_DEPTH), []],
  [`${MAX_DOCUMENT_DEPTH + 1} levels are one too many`, nest(MAX_DOCUMENT_DEPTH + 1), [Array(MAX_DOCUMENT_DEPTH).fill("a").join(".")]],
];

for (const [name, doc, fields, reason] of cases) {
  test(name, () => {
    const errs = documentErrors(doc);
    assert.deepEqual(errs.map((e) => e.field), fields, JSON.stringify(errs));
    if (reason) assert.ok(errs.every((e) => e.reason === reason), JSON.stringify(errs));
  });
}

test("a cyclic value is stopped by the depth limit rather than looping", () => {
  const a: unknown[] = [];
  a.push(a);
  assert.equal(documentErrors({ a }).length, 1);
});

test(`at most ${MAX_DOCUMENT_ERRORS} problems are reported for one document`, () => {
  const doc = Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`k${i}`, "\u0000"]));
  assert.equal(documentErrors(doc).length, MAX_DOCUMENT_ERRORS);
});

test("stringProblem says why a string cannot be stored", () => {
  assert.equal(stringProblem("fine"), undefined);
  assert.match(stringProblem("a\u0000")!, /NUL/);
  assert.match(stringProblem("\ud800")!, /surrogate/);
});

// ---- decodeDocument: [case, text, format, expected value | error class and field] ----
const decoded: Array<[string, string, DocumentFormat, unknown]> = [
  ["JSON text decodes to its value", '{"a":[1,"b"]}', "json", { a: [1, "b"] }],
  ["YAML text decodes to its value", "a: [1, b]\nc: {d: null}\n", "yaml", { a: [1, "b"], c: { d: null } }],
  ["YAML 1.1 directives do not bring back 1.1 types (dates stay strings)", "%YAML 1.1\n---\nt: 2001-12-14\n", "yaml", { t: "2001-12-14" }],
  ["no text is no document", "", "json", undefined],
  ["a YAML body that is JSON decodes as JSON", '{"a": [1, "b"], "c": "\\u00e9"}', "yaml", { a: [1, "b"], c: "é" }],
  ["a YAML flow mapping that is not JSON still decodes as YAML", "{a: [1, b]}", "yaml", { a: [1, "b"] }],
  ["a YAML duplicate key takes the last value, as JSON does", "a: 1\na: 2\n", "yaml", { a: 2 }],
  [`YAML block maps ${MAX_DOCUMENT_DEPTH} levels deep decode`, Array.from({ length: MAX_DOCUMENT_DEPTH }, (_, i) => " ".repeat(i) + "a:").join("\n") + " 1", "yaml", nest(MAX_DOCUMENT_DEPTH)],
];
for (const [name, text, format, want] of decoded) test(name, () => assert.deepEqual(decodeDocument(text, format, REF), want));

const refused: Array<[string, string, DocumentFormat, typeof BadRequestError | typeof InvalidError, string?]> = [
  ["malformed JSON is a BadRequestError", "{not json", "json", BadRequestError],
  ["malformed YAML is a BadRequestError", "a: [unclosed", "yaml", BadRequestError],
  ["YAML with two documents is a BadRequestError", "--- a\n--- b\n", "yaml", BadRequestError],
  ["YAML flow collections nested 100,000 deep are refused as they are read", "a: " + "[".repeat(100_000), "yaml", BadRequestError],
  ["YAML block sequences nested a million deep are refused as they are read", "- ".repeat(1_000_000) + "x", "yaml", BadRequestError],
  ["YAML block maps nested 2,000 deep are refused as they are read", Array.from({ length: 2000 }, (_, i) => " ".repeat(i) + "a:").join("\n") + " 1", "yaml", BadRequestError],
  ["JSON nested 100,000 levels deep is an InvalidError, not a stack overflow", "[".repeat(100_000) + "]".repeat(100_000), "json", InvalidError],
  ["a YAML alias that contains itself is an InvalidError", "a: &a [*a]\n", "yaml", InvalidError],
  ["a YAML alias bomb is a BadRequestError", "a: &a [x,x,x,x,x,x,x,x,x,x]\n" + Array.from({ length: 12 }, (_, i) => `b${i}: &b${i} [${Array(10).fill(i ? `*b${i - 1}` : "*a").join(",")}]`).join("\n"), "yaml", BadRequestError],
  ["a YAML __proto__ key is an InvalidError naming it", "__proto__: {polluted: 1}\n", "yaml", InvalidError, "__proto__"],
  ["a JSON __proto__ key is an InvalidError naming it", '{"metadata":{"__proto__":{"polluted":1}}}', "json", InvalidError, "metadata.__proto__"],
  ["a YAML NUL escape is an InvalidError naming the field", 'a: "x\\0y"\n', "yaml", InvalidError, "a"],
  ["YAML .nan is an InvalidError naming the field", "a: .nan\n", "yaml", InvalidError, "a"],
  ["a body that is a bare string is a BadRequestError, whatever it holds", '"\\u0000"', "json", BadRequestError],
  ["a body that is a number is a BadRequestError", "5", "json", BadRequestError],
  ["a body that is null is a BadRequestError", "null", "json", BadRequestError],
  ["a YAML body that is only a comment is a BadRequestError", "# nothing\n", "yaml", BadRequestError],
  ["a YAML body that is .inf is a BadRequestError", ".inf", "yaml", BadRequestError],
];
for (const [name, text, format, cls, field] of refused) {
  test(name, () => {
    assert.throws(
      () => decodeDocument(text, format, REF),
      (e: unknown) => e instanceof cls && (field === undefined || (e as InvalidError).causes.some((c) => c.field === field)),
    );
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });
}
