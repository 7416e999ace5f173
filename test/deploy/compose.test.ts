// docker-compose.yml against the services' own settings: every service's environment loads with
// its loader, and the internal gRPC servers (the scheduler's Simulate, execution's estimator)
// speak TLS with a service account key while their callers check their certificate, all from the
// files the gateway makes on its first start (so those servers wait for it).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";
import { loadConfig, type Schema } from "@flotilla/config";
import { serviceSchema } from "@flotilla/runtime";
import { configSchema as gateway } from "../../services/gateway/src/config.js";
import { configSchema as binding } from "../../services/binding/src/config.js";
import { configSchema as scheduler } from "../../services/scheduler/src/config.js";
import { configSchema as taintManager } from "../../services/taint-manager/src/config.js";
import { configSchema as eviction } from "../../services/eviction/src/config.js";
import { configSchema as execution } from "../../services/execution/src/config.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const SCHEMAS: Record<string, Schema> = { gateway, binding, scheduler, "taint-manager": taintManager, eviction, execution };
type Service = { environment?: Record<string, string>; volumes?: Array<string>; depends_on?: Record<string, unknown> };
const compose = parse(readFileSync(path.join(root, "docker-compose.yml"), "utf8"), { merge: true }) as { services: Record<string, Service> };
/** The environment as compose passes it: `${VAR:-default}` is its default (nothing set in the shell). */
const envOf = (s: Service) => Object.fromEntries(Object.entries(s.environment ?? {}).map(([k, v]) => [k, String(v).replace(/\$\{\w+:-([^}]*)\}/g, "$1")]));

test("every service's docker-compose environment loads with its own loader", () => {
  for (const [name, schema] of Object.entries(SCHEMAS)) {
    const env = envOf(compose.services[name]!);
    for (const k of Object.keys(env)) assert.ok(k in schema || k in serviceSchema, `${name}: ${k} is no setting of the service (misspelt?)`);
    loadConfig({ ...serviceSchema, ...schema }, env);
  }
});

test("in docker-compose the internal gRPC servers speak TLS with the service account key, and their callers check their certificate", () => {
  const gw = envOf(compose.services.gateway!);
  const made = new Set([gw.TLS_CERT_FILE, gw.TLS_KEY_FILE, gw.SERVICE_ACCOUNT_KEY_FILE]);
  const names = gw.TLS_CERT_HOSTS!.split(",");
  for (const [server, portSetting, urlSetting, caSetting] of [
    ["scheduler", "SCHEDULER_GRPC_PORT", "SCHEDULER_GRPC_URL", "SCHEDULER_CA_FILE"],
    ["execution", "ESTIMATOR_PORT", "ESTIMATOR_GRPC_URL", "ESTIMATOR_CA_FILE"],
  ] as const) {
    const s = compose.services[server]!;
    const env = envOf(s);
    assert.ok(Number(env[portSetting]) > 0, `${server}: ${portSetting} is on`);
    for (const k of ["TLS_CERT_FILE", "TLS_KEY_FILE", "SERVICE_ACCOUNT_KEY_FILE"]) assert.ok(made.has(env[k]), `${server}: ${k}=${env[k]} is not a file the gateway makes`);
    assert.ok(s.volumes?.some((v) => v.startsWith("gateway-state:/var/lib/flotilla")), `${server}: the gateway's files are not mounted`);
    assert.ok(s.depends_on?.gateway, `${server}: does not wait for the gateway that makes its files`);
    assert.ok(names.includes(server), `the certificate does not name ${server}`);
    const callers = Object.entries(compose.services).filter(([, c]) => envOf(c)[urlSetting]);
    assert.ok(callers.length, `nobody calls ${server}`);
    for (const [caller, c] of callers) {
      assert.equal(envOf(c)[urlSetting]!.split(":")[0], server);
      assert.equal(envOf(c)[caSetting], gw.TLS_CERT_FILE, `${caller}: ${caSetting} is not the certificate ${server} serves`);
    }
  }
});
