// Reading the services' Prometheus /metrics text.

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses Prometheus text exposition (comments skipped; label values without escaped quotes). */
export function parseMetrics(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split("\n")) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{([^}]*)\})?\s+(\S+)/.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? "").matchAll(/(\w+)="([^"]*)"/g)) labels[l[1]!] = l[2]!;
    out.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return out;
}

/** The samples at `url`, or [] when it does not answer (`headers`: e.g. the gateway's `authorization`). */
export async function scrape(url: string, headers: Record<string, string> = {}): Promise<Sample[]> {
  const text = await fetch(url, { headers }).then((r) => (r.ok ? r.text() : ""), () => "");
  return parseMetrics(text);
}

/** The sum of a metric's samples whose labels include `match`. */
export function sum(samples: readonly Sample[], name: string, match: Record<string, string> = {}): number {
  return samples.filter((s) => s.name === name && Object.entries(match).every(([k, v]) => s.labels[k] === v)).reduce((a, s) => a + s.value, 0);
}

/** Whether any controller behind `url` has keys queued or reconciles in flight. */
export async function controllersBusy(url: string, headers: Record<string, string> = {}): Promise<boolean> {
  const s = await scrape(url, headers);
  return sum(s, "flotilla_controller_queue_depth") + sum(s, "flotilla_controller_in_flight") > 0;
}
