import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import type { TestContext } from "node:test";
import { promisify } from "node:util";

const run = promisify(execFile);

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** kubectl's client version, or undefined when there is none. */
export async function kubectlVersion(): Promise<{ major: number; minor: number; gitVersion: string } | undefined> {
  try {
    const out = JSON.parse((await run("kubectl", ["version", "--client", "-o", "json"])).stdout) as { clientVersion: { major: string; minor: string; gitVersion: string } };
    return { major: Number(out.clientVersion.major), minor: parseInt(out.clientVersion.minor, 10), gitVersion: out.clientVersion.gitVersion };
  } catch {
    return undefined;
  }
}

/**
 * Whether a test that drives kubectl can run: true when kubectl is there; without it the test
 * fails under CI (`.ci/run` installs Debian's kubernetes-client) and is skipped elsewhere.
 */
export async function kubectlOr(t: TestContext): Promise<boolean> {
  if (await kubectlVersion()) return true;
  if (process.env.CI) assert.fail("kubectl is required in CI (.ci/run installs it when missing)");
  t.skip("kubectl is not installed");
  return false;
}

/**
 * kubectl against `server` over TLS (`ca` the only trusted certificate) with a bearer token and
 * no kubeconfig; resolves with its exit code and output whatever the code.
 */
export function kubectlAt(server: string, ca: string, env: Record<string, string> = {}) {
  return (token: string, ...args: string[]): Promise<KubectlResult> =>
    run("kubectl", [`--server=${server}`, `--token=${token}`, `--certificate-authority=${ca}`, ...args], { env: { ...process.env, KUBECONFIG: "/dev/null", ...env } }).then(
      (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
      (e: { code?: number; stdout?: string; stderr?: string }) => ({ code: typeof e.code === "number" ? e.code : -1, stdout: e.stdout ?? "", stderr: e.stderr ?? "" }),
    );
}
