/**
 * One typed configuration loader for every service: a schema of fields, each parsing its
 * environment variable with a default; every problem is reported at once.
 */
export interface Field<T> {
  readonly default: T | undefined;
  readonly describe: string;
  parse(raw: string): T;
}

export class ConfigError extends Error {
  override readonly name = "ConfigError";
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  ${problems.join("\n  ")}`);
  }
}

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** "500ms", "30s", "5m", "1h30m", or a bare number of seconds (as Karmada flags accept "300"). */
export function parseDuration(raw: string): number {
  const s = raw.trim();
  if (/^\d+(\.\d+)?$/.test(s)) return Math.round(Number(s) * 1000);
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h)/gy;
  let total = 0;
  let matched = 0;
  for (let m = re.exec(s); m; m = re.exec(s)) {
    total += Number(m[1]) * UNITS[m[2]!]!;
    matched = re.lastIndex;
  }
  if (matched === 0 || matched !== s.length) throw new Error(`not a duration (e.g. 500ms, 30s, 5m): ${JSON.stringify(raw)}`);
  return Math.round(total);
}

export const str = (def?: string, describe = ""): Field<string> => ({
  default: def,
  describe,
  parse: (raw) => raw,
});

export const int = (def?: number, opts: { min?: number; max?: number } = {}, describe = ""): Field<number> => ({
  default: def,
  describe,
  parse(raw) {
    if (!/^-?\d+$/.test(raw.trim())) throw new Error(`not an integer: ${JSON.stringify(raw)}`);
    const n = Number(raw);
    if (opts.min !== undefined && n < opts.min) throw new Error(`must be >= ${opts.min}, got ${n}`);
    if (opts.max !== undefined && n > opts.max) throw new Error(`must be <= ${opts.max}, got ${n}`);
    return n;
  },
});

export const num = (def?: number, opts: { min?: number; max?: number } = {}, describe = ""): Field<number> => ({
  default: def,
  describe,
  parse(raw) {
    const n = Number(raw);
    if (raw.trim() === "" || !Number.isFinite(n)) throw new Error(`not a number: ${JSON.stringify(raw)}`);
    if (opts.min !== undefined && n < opts.min) throw new Error(`must be >= ${opts.min}, got ${n}`);
    if (opts.max !== undefined && n > opts.max) throw new Error(`must be <= ${opts.max}, got ${n}`);
    return n;
  },
});

export const port = (def?: number, describe = ""): Field<number> => int(def, { min: 0, max: 65535 }, describe);

export const bool = (def?: boolean, describe = ""): Field<boolean> => ({
  default: def,
  describe,
  parse(raw) {
    const v = raw.trim().toLowerCase();
    if (["true", "1", "yes", "on"].includes(v)) return true;
    if (["false", "0", "no", "off"].includes(v)) return false;
    throw new Error(`not a boolean (true|false): ${JSON.stringify(raw)}`);
  },
});

/** A duration in milliseconds; defaults are given as strings like "5m". */
export const duration = (def?: string, describe = ""): Field<number> => ({
  default: def === undefined ? undefined : parseDuration(def),
  describe,
  parse: parseDuration,
});

export const url = (def?: string, protocols: string[] = [], describe = ""): Field<string> => ({
  default: def,
  describe,
  parse(raw) {
    let u: URL;
    try {
      u = new URL(raw);
    } catch {
      throw new Error(`not a URL: ${JSON.stringify(raw)}`);
    }
    if (protocols.length && !protocols.includes(u.protocol.replace(/:$/, ""))) throw new Error(`expected a ${protocols.join("|")} URL, got ${u.protocol}`);
    return raw;
  },
});

export const oneOf = <const T extends string>(values: readonly T[], def?: T, describe = ""): Field<T> => ({
  default: def,
  describe,
  parse(raw) {
    if (!(values as readonly string[]).includes(raw)) throw new Error(`must be one of ${values.join("|")}, got ${JSON.stringify(raw)}`);
    return raw as T;
  },
});

export type Schema = Record<string, Field<unknown>>;
export type ConfigOf<S extends Schema> = { readonly [K in keyof S]: S[K] extends Field<infer T> ? T : never };

/** Reads every field of `schema` from `env`; throws ConfigError naming every bad or missing variable. */
export function loadConfig<S extends Schema>(schema: S, env: Record<string, string | undefined>): ConfigOf<S> {
  const out: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [name, field] of Object.entries(schema)) {
    const raw = env[name];
    if (raw === undefined || raw === "") {
      if (field.default === undefined) problems.push(`${name}: required`);
      else out[name] = field.default;
      continue;
    }
    try {
      out[name] = field.parse(raw);
    } catch (e) {
      problems.push(`${name}: ${(e as Error).message}`);
    }
  }
  if (problems.length) throw new ConfigError(problems);
  return Object.freeze(out) as ConfigOf<S>;
}

/** Every field's default (as a service without any variable set would run); throws when a field has none. */
export function defaultsOf<S extends Schema>(schema: S): ConfigOf<S> {
  return loadConfig(schema, {});
}

/** The settings every service shares. */
export const common = {
  DATABASE_URL: url("postgres://postgres@127.0.0.1:5432/flotilla", ["postgres", "postgresql"], "Postgres connection string; the database is created if missing"),
  NATS_URL: url("nats://127.0.0.1:4222", ["nats", "tls"], "NATS server with JetStream"),
  LOG_LEVEL: oneOf(["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const, "info", "pino log level"),
  EVENTS_STREAM: str("FLOTILLA_OBJECTS", "JetStream stream carrying object wake-ups"),
  EVENTS_PREFIX: str("flotilla", "subject prefix of the wake-ups"),
  EVENTS_REPLICAS: int(1, { min: 1, max: 5 }, "copies of the wake-up stream in a NATS cluster (JetStream num_replicas; 3 for a three-node cluster); applied to an existing stream at start"),
};
