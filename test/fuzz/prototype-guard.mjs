// Loaded into the gateway under fuzz (`node --import`): the process exits with code 86 as soon as a
// built-in prototype gains or loses a property, naming it on stderr, so prototype pollution is
// caught at the request that caused it rather than whenever it would break something.
const watched = { Object: Object.prototype, Array: Array.prototype, Function: Function.prototype, String: String.prototype, Number: Number.prototype, Boolean: Boolean.prototype };
const baseline = new Map(Object.entries(watched).map(([n, p]) => [n, new Set(Reflect.ownKeys(p))]));

export const POLLUTED_EXIT_CODE = 86;

setInterval(() => {
  for (const [n, p] of Object.entries(watched)) {
    const keys = Reflect.ownKeys(p);
    const before = baseline.get(n);
    if (keys.length !== before.size || keys.some((k) => !before.has(k))) {
      const added = keys.filter((k) => !before.has(k)).map(String);
      process.stderr.write(`PROTOTYPE POLLUTED: ${n}.prototype gained ${JSON.stringify(added)}\n`);
      process.exit(POLLUTED_EXIT_CODE);
    }
  }
}, 10).unref();
