import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtemp, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { NatsServer, canRunNatsServer } from "@flotilla/testkit";
import { connectNats, natsAuthOptions } from "./stream.js";

test("a NATS server that wants credentials: refused without them, connected with user/password or a token", { skip: !canRunNatsServer() && "nats-server not installed" }, async () => {
  const withUser = await NatsServer.create({ args: ["--user", "flotilla", "--pass", "s3cret"] });
  const withToken = await NatsServer.create({ args: ["--auth", "t0ken"] });
  await withUser.start();
  await withToken.start();
  try {
    await assert.rejects(connectNats({ servers: withUser.url, maxReconnectAttempts: 0, timeout: 2000 }), /Authorization|authorization|auth/i);
    await assert.rejects(connectNats({ servers: withUser.url, maxReconnectAttempts: 0, timeout: 2000, ...natsAuthOptions({ user: "flotilla", password: "wrong" }) }), /Authorization|authorization|auth/i);
    const nc = await connectNats({ servers: withUser.url, timeout: 2000, ...natsAuthOptions({ user: "flotilla", password: "s3cret" }) });
    await nc.flush();
    await nc.close();
    const nt = await connectNats({ servers: withToken.url, timeout: 2000, ...natsAuthOptions({ token: "t0ken" }) });
    await nt.flush();
    await nt.close();
    assert.deepEqual(natsAuthOptions({}), {});
    // a credentials file is read when the options are made (a missing one is an error then, not at connect)
    const dir = await mkdtemp(path.join(os.tmpdir(), "flotilla-creds-"));
    assert.throws(() => natsAuthOptions({ credsFile: path.join(dir, "missing.creds") }), /ENOENT/);
    await writeFile(path.join(dir, "x.creds"), "not a creds file");
    assert.ok(natsAuthOptions({ credsFile: path.join(dir, "x.creds") }).authenticator);
  } finally {
    await withUser.destroy();
    await withToken.destroy();
  }
});
