import { createHash } from "node:crypto";
import type { UserInfo } from "./rbac.js";

/** One line of a token file that could not be read. */
export class TokenFileError extends Error {
  override readonly name = "TokenFileError";
}

/** Splits one CSV record (RFC 4180: quoted fields, "" for a quote inside quotes). */
export function csvFields(line: string): string[] {
  const out: string[] = [];
  let i = 0;
  for (;;) {
    let field = "";
    if (line[i] === '"') {
      i++;
      for (;;) {
        if (i >= line.length) throw new TokenFileError("unterminated quoted field");
        if (line[i] === '"') {
          if (line[i + 1] === '"') {
            field += '"';
            i += 2;
            continue;
          }
          i++;
          break;
        }
        field += line[i++];
      }
      if (i < line.length && line[i] !== ",") throw new TokenFileError("text after a quoted field");
    } else {
      const end = line.indexOf(",", i);
      field = end < 0 ? line.slice(i) : line.slice(i, end);
      if (field.includes('"')) throw new TokenFileError("a quote inside an unquoted field");
      i = end < 0 ? line.length : end;
    }
    out.push(field);
    if (i >= line.length) return out;
    i++; // the comma
  }
}

/** A token is looked up by its SHA-256, so the table holds no token and a lookup's time does not depend on how much of a guess matches. */
export const tokenDigest = (token: string) => createHash("sha256").update(token, "utf8").digest("base64url");

/**
 * Kubernetes' static token file (`--token-auth-file`): one `token,user,uid[,"group1,group2"]`
 * per line; blank lines are skipped. A malformed line, an empty token or user, or a token given
 * twice is an error naming the line (the server does not start on a file it cannot read fully).
 */
export function parseTokenFile(text: string): Map<string, UserInfo> {
  const users = new Map<string, UserInfo>();
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (!line) return;
    let f: string[];
    try {
      f = csvFields(line);
    } catch (e) {
      throw new TokenFileError(`line ${i + 1}: ${(e as Error).message}`);
    }
    if (f.length < 3) throw new TokenFileError(`line ${i + 1}: want token,user,uid[,"group1,group2"], found ${f.length} field(s)`);
    const [token, name, uid, groups] = f.map((x) => x.trim()) as [string, string, string, string | undefined];
    if (!token) throw new TokenFileError(`line ${i + 1}: the token is empty`);
    if (!name) throw new TokenFileError(`line ${i + 1}: the user name is empty`);
    const d = tokenDigest(token);
    if (users.has(d)) throw new TokenFileError(`line ${i + 1}: the same token is given twice`);
    users.set(d, { name, uid: uid || undefined, groups: groups ? groups.split(",").map((g) => g.trim()).filter(Boolean) : [] });
  });
  return users;
}

/** The bearer token of an `Authorization` header value (RFC 6750: scheme case-insensitive), or undefined. */
export function bearerToken(header: string | undefined): string | undefined {
  const m = /^Bearer +(\S+) *$/i.exec(header ?? "");
  return m?.[1];
}
