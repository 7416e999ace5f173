import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { access, chmod, mkdir, open } from "node:fs/promises";
import { isIP } from "node:net";
import { dirname } from "node:path";
import { promisify } from "node:util";

/** A new random bearer token (32 bytes, base64url). */
export const newToken = () => randomBytes(32).toString("base64url");

/** The token file line of an administrator (group system:masters). */
export const adminLine = (token: string, user = "admin") => `${token},${user},${user},"system:masters"\n`;

/**
 * Creates the token file with one admin token when it does not exist (mode 0600, never
 * overwritten: `wx`). Returns the token when it created the file, undefined when it existed.
 */
export async function ensureTokenFile(path: string): Promise<string | undefined> {
  const token = newToken();
  return (await createExclusive(path, adminLine(token))) ? token : undefined;
}

/**
 * Writes `content` to a new file (mode 0600, its folder made if missing) unless the file exists:
 * true when it wrote it, false when the file was there (it is never overwritten, so replicas
 * starting together end up reading the same file).
 */
export async function createExclusive(path: string, content: string | Buffer): Promise<boolean> {
  await mkdir(dirname(path), { recursive: true });
  try {
    const f = await open(path, "wx", 0o600);
    try {
      await f.writeFile(content);
    } finally {
      await f.close();
    }
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw e;
  }
}

/**
 * Creates a self-signed serving certificate and key (P-256, one year, SANs localhost, 127.0.0.1,
 * ::1 and `hosts`) with the openssl command when the certificate file does not exist. Returns true
 * when it created them. For a development or single-host setup; production brings its own.
 */
export async function ensureServingCert(certFile: string, keyFile: string, hosts: string[] = []): Promise<boolean> {
  const exists = await access(certFile).then(
    () => true,
    () => false,
  );
  if (exists) return false;
  await mkdir(dirname(certFile), { recursive: true });
  await mkdir(dirname(keyFile), { recursive: true });
  const sans = [...new Set(["localhost", "127.0.0.1", "::1", ...hosts.filter((h) => h && h !== "0.0.0.0" && h !== "::")])].map((h) => (isIP(h) ? `IP:${h}` : `DNS:${h}`));
  await promisify(execFile)("openssl", [
    "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "365",
    "-subj", "/CN=flotilla-gateway", "-addext", `subjectAltName=${sans.join(",")}`,
    "-keyout", keyFile, "-out", certFile,
  ]);
  await chmod(keyFile, 0o600);
  return true;
}

/** 127.0.0.0/8, ::1 and localhost: addresses no other host can reach. */
export function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}
