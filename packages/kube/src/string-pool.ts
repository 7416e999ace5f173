/**
 * One copy of each string value that repeats across the objects a cache keeps. Every parsed
 * object brings its own copies of what the member repeats on all of them (Karmada's
 * managed-annotations and managed-labels lists, the Work's namespace, condition reasons and
 * messages, the server's defaults): `intern` replaces them in place by the copy already kept.
 * Strings are values, so nothing a reader sees changes. Bounded: two generations of at most `max`
 * strings; a string met again stays, one met once (a uid, a resourceVersion) is forgotten after
 * two generations. Strings shorter than `minLength` are left alone (a short copy costs about as
 * much as the table entry).
 */
export class StringPool {
  private young = new Map<string, string>();
  private old = new Map<string, string>();

  constructor(
    private readonly max = 4096,
    private readonly minLength = 8,
  ) {}

  /** The kept copy of `s` (`s` itself when it is new, and kept from now on). */
  get(s: string): string {
    if (s.length < this.minLength) return s;
    const hit = this.young.get(s);
    if (hit !== undefined) return hit;
    const kept = this.old.get(s) ?? s;
    this.young.set(kept, kept);
    if (this.young.size > this.max) {
      this.old = this.young;
      this.young = new Map();
    }
    return kept;
  }

  /** Replaces every string value in `v`'s objects and arrays by its kept copy (in place); returns `v`. */
  intern<T>(v: T): T {
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const x: unknown = v[i];
        if (typeof x === "string") v[i] = this.get(x);
        else if (typeof x === "object" && x !== null) this.intern(x);
      }
    } else if (typeof v === "object" && v !== null) {
      const o = v as Record<string, unknown>;
      for (const k in o) {
        const x = o[k];
        if (typeof x === "string") o[k] = this.get(x);
        else if (typeof x === "object" && x !== null) this.intern(x);
      }
    }
    return v;
  }

  get size(): number {
    return this.young.size + this.old.size;
  }
}
