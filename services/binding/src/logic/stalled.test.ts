import { test } from "node:test";
import assert from "node:assert/strict";
import type { Condition, KubeObject } from "@flotilla/api";
import { InvalidTemplateReason, MAX_MESSAGE, Stalled, cutMessage, hasStalled, templateProblem, withStalled, withoutStalled } from "./stalled.js";

const now = new Date("2026-01-02T03:04:05.678Z");
const later = new Date("2026-01-02T04:00:00Z");
const deployment = (requests: Record<string, unknown>, metadata: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "poison", namespace: "default", ...metadata },
  spec: { replicas: 2, selector: { matchLabels: { app: "p" } }, template: { metadata: { labels: { app: "p" } }, spec: { containers: [{ name: "c", image: "nginx", resources: { requests } }] } } },
});

test("a template's problem names every field a controller could not read; a readable template has none", () => {
  const cases: [string, KubeObject, string[] | undefined][] = [
    ["a valid Deployment has no problem", deployment({ cpu: "100m" }), undefined],
    ["a ConfigMap with any data has no problem", { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c" }, data: { a: "b" } } as KubeObject, undefined],
    ["a cpu request of true", deployment({ cpu: true }), ["spec.template.spec.containers[0].resources.requests[cpu]"]],
    ["a cpu request of []", deployment({ cpu: [] }), ["spec.template.spec.containers[0].resources.requests[cpu]"]],
    ["a cpu request of {}", deployment({ cpu: {} }), ["spec.template.spec.containers[0].resources.requests[cpu]"]],
    ["labels that are a list (selectors read them)", deployment({ cpu: "1" }, { labels: [] }), ["metadata.labels"]],
  ];
  for (const [name, t, fields] of cases) assert.deepEqual(templateProblem(t)?.causes.map((c) => c.field), fields, name);
  assert.match(templateProblem(deployment({ cpu: true }))!.message, /^Deployment\.apps "poison" is invalid: spec\.template\.spec\.containers\[0\]\.resources\.requests\[cpu\]: /);
});

test("Stalled is set once, keeps its transition time while it stays, and is removed once the template can be read", () => {
  const cases: [string, unknown, Condition[] | undefined][] = [
    ["no status gets the condition", undefined, [{ type: Stalled, status: "True", reason: InvalidTemplateReason, message: "bad", lastTransitionTime: "2026-01-02T03:04:05Z" }]],
    [
      "other conditions stay",
      { replicas: 3, conditions: [{ type: "Available", status: "True" }] },
      [
        { type: "Available", status: "True" },
        { type: Stalled, status: "True", reason: InvalidTemplateReason, message: "bad", lastTransitionTime: "2026-01-02T03:04:05Z" },
      ],
    ],
    ["conditions that are not a list are replaced", { conditions: 5 }, [{ type: Stalled, status: "True", reason: InvalidTemplateReason, message: "bad", lastTransitionTime: "2026-01-02T03:04:05Z" }]],
  ];
  for (const [name, status, want] of cases) assert.deepEqual((withStalled(status, "bad", now) as { conditions?: Condition[] } | undefined)?.conditions, want, name);

  type Status = { replicas?: number; conditions?: Condition[] };
  const set = withStalled<Status>({ replicas: 3 }, "bad", now)!;
  assert.equal(set.replicas, 3, "the rest of the status stays");
  assert.equal(withStalled(set, "bad", later), undefined, "already says so: nothing to write");
  const changed = withStalled(set, "worse", later)!;
  assert.deepEqual(changed.conditions, [{ type: Stalled, status: "True", reason: InvalidTemplateReason, message: "worse", lastTransitionTime: "2026-01-02T03:04:05Z" }], "a new message keeps the transition time");
  assert.ok(hasStalled(set));

  assert.deepEqual(withoutStalled(set), { replicas: 3 }, "removed, with an empty list dropped");
  assert.deepEqual(withoutStalled<Status>({ conditions: [{ type: "Available", status: "True" }, ...(set.conditions ?? [])] }), { conditions: [{ type: "Available", status: "True" }] });
  assert.equal(withoutStalled({ replicas: 3 }), undefined, "none to remove: nothing to write");
  assert.equal(withoutStalled({ conditions: [{ type: Stalled, status: "True", reason: "SomeoneElses" }] }), undefined, "another reason's Stalled is not ours to remove");
  assert.equal(withoutStalled(undefined), undefined);
  assert.equal(hasStalled({ conditions: "x" }), false);
});

test("messages are cut to a bounded length", () => {
  assert.equal(cutMessage("short"), "short");
  const long = cutMessage("x".repeat(5000));
  assert.equal(long.length, MAX_MESSAGE);
  assert.ok(long.endsWith("…"));
});
