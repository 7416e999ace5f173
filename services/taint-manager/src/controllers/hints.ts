import type { AnyResourceBinding } from "@flotilla/api";

/**
 * Bindings as the taint manager listed them, handed to the binding-eviction controller with
 * their keys: an eviction then starts from that copy instead of reading the binding again. The
 * copy is only a first guess — the eviction's write carries its resourceVersion, so a binding
 * changed since is read afresh after a conflict. Each hint is used once; bounded in size.
 */
export class EvictionHints {
  private readonly hints = new Map<string, AnyResourceBinding>();

  constructor(private readonly max = 100_000) {}

  set(key: string, b: AnyResourceBinding): void {
    if (this.hints.size >= this.max) this.hints.clear();
    this.hints.set(key, b);
  }

  take(key: string): AnyResourceBinding | undefined {
    const b = this.hints.get(key);
    if (b) this.hints.delete(key);
    return b;
  }

  clear(): void {
    this.hints.clear();
  }
}
