import { pino, type Logger } from "pino";

export type { Logger } from "pino";

/** The one root logger of a process; children are made with `log.child({ controller })`. */
export function createLogger(opts: { name: string; level?: string }): Logger {
  return pino({
    name: opts.name,
    level: opts.level ?? "info",
    base: { service: opts.name },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  });
}

/** A logger that drops everything (tests). */
export function silentLogger(): Logger {
  return pino({ level: "silent" });
}
