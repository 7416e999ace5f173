import { BadRequestError } from "@flotilla/api";

/** Kubernetes' protobuf media type (what client-go sends for built-in kinds such as SelfSubjectAccessReview). */
export const PROTOBUF_MEDIA_TYPE = "application/vnd.kubernetes.protobuf";
const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]); // "k8s\0"

/** The length-delimited fields of one protobuf message, by number (varints and fixed-size fields skipped). */
export function messageFields(b: Buffer): Map<number, Buffer[]> {
  const out = new Map<number, Buffer[]>();
  let i = 0;
  const varint = (): number => {
    let v = 0;
    for (let shift = 0; ; shift += 7) {
      if (i >= b.length || shift > 49) throw new BadRequestError("the protobuf body is truncated or malformed");
      const c = b[i++]!;
      v += (c & 0x7f) * 2 ** shift;
      if (c < 0x80) return v;
    }
  };
  while (i < b.length) {
    const tag = varint();
    const field = Math.floor(tag / 8);
    switch (tag & 7) {
      case 0:
        varint();
        break;
      case 1:
        i += 8;
        break;
      case 5:
        i += 4;
        break;
      case 2: {
        const n = varint();
        if (i + n > b.length) throw new BadRequestError("the protobuf body is truncated or malformed");
        out.set(field, [...(out.get(field) ?? []), b.subarray(i, i + n)]);
        i += n;
        break;
      }
      default:
        throw new BadRequestError("the protobuf body is truncated or malformed");
    }
  }
  if (i > b.length) throw new BadRequestError("the protobuf body is truncated or malformed");
  return out;
}

/** The object inside Kubernetes' protobuf envelope (magic, then runtime.Unknown whose field 2 is the raw object). */
export function unwrapEnvelope(body: Buffer): Buffer {
  if (body.length < MAGIC.length || !body.subarray(0, MAGIC.length).equals(MAGIC)) throw new BadRequestError("the protobuf body does not start with Kubernetes' envelope");
  return messageFields(body.subarray(MAGIC.length)).get(2)?.[0] ?? Buffer.alloc(0);
}

const strings = (m: Map<number, Buffer[]>, names: Record<number, string>) => {
  const o: Record<string, string> = {};
  for (const [n, k] of Object.entries(names)) {
    const v = m.get(Number(n))?.at(-1);
    if (v !== undefined) o[k] = v.toString("utf8");
  }
  return o;
};

/**
 * A SelfSubjectAccessReview in protobuf (authorization/v1 generated.proto: spec = 2;
 * spec.resourceAttributes = 1 {namespace 1, verb 2, group 3, version 4, resource 5,
 * subresource 6, name 7}; spec.nonResourceAttributes = 2 {path 1, verb 2}) as its JSON spec.
 */
export function decodeSelfSubjectAccessReviewSpec(body: Buffer): Record<string, Record<string, string> | undefined> {
  const spec = messageFields(messageFields(unwrapEnvelope(body)).get(2)?.[0] ?? Buffer.alloc(0));
  const r = spec.get(1)?.[0];
  const n = spec.get(2)?.[0];
  return {
    resourceAttributes: r && strings(messageFields(r), { 1: "namespace", 2: "verb", 3: "group", 4: "version", 5: "resource", 6: "subresource", 7: "name" }),
    nonResourceAttributes: n && strings(messageFields(n), { 1: "path", 2: "verb" }),
  };
}
