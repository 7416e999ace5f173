import { test } from "node:test";
import assert from "node:assert/strict";
import { AckPolicy, DeliverPolicy, type ConsumerConfig } from "@nats-io/jetstream";
import { consumerChanges, type WantedConsumer } from "./consumer.js";

const want: WantedConsumer = {
  durable_name: "scheduler",
  ack_policy: AckPolicy.Explicit,
  ack_wait: 30e9,
  max_deliver: -1,
  deliver_policy: DeliverPolicy.All,
  filter_subject: "flotilla.obj.apps.Deployment",
  max_ack_pending: 1000,
};
/** The consumer as the server reports it: our settings plus the server's defaults. */
const have = (o: Partial<ConsumerConfig> = {}): Partial<ConsumerConfig> => ({ ...want, name: "scheduler", max_waiting: 512, num_replicas: 0, ...o });

test("consumerChanges", async (t) => {
  const cases: [string, Partial<ConsumerConfig>, ReturnType<typeof consumerChanges>][] = [
    ["the same settings need nothing (the server's own defaults are not differences)", have(), {}],
    ["a consumer placed by another deliver policy keeps its position: nothing to do", have({ deliver_policy: DeliverPolicy.New }), {}],
    ["a changed ack wait is updated in place", have({ ack_wait: 10e9 }), { update: { ack_wait: 30e9 } }],
    ["changed max ack pending and max deliver are updated together", have({ max_ack_pending: 200, max_deliver: 5 }), { update: { max_deliver: -1, max_ack_pending: 1000 } }],
  ];
  for (const [name, h, expected] of cases) await t.test(name, () => assert.deepEqual(consumerChanges(h, want), expected));
  await t.test("a consumer of another subject under the name is a conflict, never re-created", () => {
    assert.match(consumerChanges(have({ filter_subject: "flotilla.obj.core.Secret" }), want).conflict ?? "", /filter subject "flotilla\.obj\.core\.Secret", not "flotilla\.obj\.apps\.Deployment"/);
  });
  await t.test("a consumer with another ack policy is a conflict", () => {
    assert.match(consumerChanges(have({ ack_policy: AckPolicy.None }), want).conflict ?? "", /ack policy none/);
  });
});
