const encoder = new TextEncoder();

/** 32-bit FNV-1a over the UTF-8 bytes of `s` (Go's `hash/fnv.New32a`). */
export function fnv1a32(s: string): number {
  let h = 0x811c9dc5;
  let ascii = true;
  for (let i = 0; i < s.length; i++) {
    if (s.charCodeAt(i) > 0x7f) {
      ascii = false;
      break;
    }
  }
  if (ascii) {
    for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  } else {
    for (const b of encoder.encode(s)) h = Math.imul(h ^ b, 0x01000193);
  }
  return h >>> 0;
}
