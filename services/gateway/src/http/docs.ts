import { RESOURCE_TYPES, apiVersionOf } from "@flotilla/api";

/** A small human page: every served kind with its URL, and where the OpenAPI document is. */
export function docsPage(): string {
  const rows = RESOURCE_TYPES.map((t) => {
    const base = t.group ? `/apis/${t.group}/${t.version}` : `/api/${t.version}`;
    const url = t.namespaced ? `${base}/namespaces/{namespace}/${t.plural}` : `${base}/${t.plural}`;
    return `<tr><td>${t.kind}</td><td>${apiVersionOf(t)}</td><td>${t.namespaced ? "namespaced" : "cluster"}</td><td><code>${url}</code></td></tr>`;
  }).join("\n");
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>Flotilla API</title>
<style>body{font-family:system-ui,sans-serif;margin:2rem;max-width:72rem}table{border-collapse:collapse}td,th{padding:.25rem .75rem;border-bottom:1px solid #ddd;text-align:left}code{font-size:.9em}</style>
</head><body>
<h1>Flotilla API</h1>
<p>Karmada-compatible objects at Kubernetes paths. Bodies are JSON or YAML (<code>Content-Type: application/yaml</code>);
PATCH takes <code>application/merge-patch+json</code>, <code>application/strategic-merge-patch+json</code>, <code>application/json-patch+json</code> and
<code>application/apply-patch+yaml</code>. Lists take <code>?labelSelector=</code> and <code>?limit=N&amp;continue=…</code> (pages, as Kubernetes);
a list without a limit is streamed; <code>?watch=true[&amp;resourceVersion=N]</code> streams
newline-delimited <code>{"type":"ADDED|MODIFIED|DELETED","object":…}</code>. Errors are Kubernetes <code>Status</code> objects.</p>
<p>Machine-readable: <a href="/openapi.json">/openapi.json</a> (OpenAPI 3), and per group-version as kubectl reads it: <a href="/openapi/v3">/openapi/v3</a>. Discovery: <a href="/api">/api</a>, <a href="/apis">/apis</a>.</p>
<table><thead><tr><th>kind</th><th>apiVersion</th><th>scope</th><th>collection URL</th></tr></thead><tbody>
${rows}
</tbody></table>
</body></html>`;
}
