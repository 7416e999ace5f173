import { readFileSync } from "node:fs";
import { AUTHENTICATED_GROUP, type UserInfo } from "./rbac.js";
import { bearerToken, parseTokenFile, tokenDigest } from "./tokens.js";

export interface Authenticator {
  /** The user an `Authorization` header value names; undefined when it names no one. */
  authenticate(authorization: string | undefined): Promise<UserInfo | undefined>;
}

/** Bearer tokens from a Kubernetes token file (see parseTokenFile), read once at start. */
export class TokenFileAuthenticator implements Authenticator {
  private readonly users: Map<string, UserInfo>;
  constructor(text: string) {
    this.users = parseTokenFile(text);
  }
  static fromFile(path: string): TokenFileAuthenticator {
    return new TokenFileAuthenticator(readFileSync(path, "utf8"));
  }
  get size(): number {
    return this.users.size;
  }
  async authenticate(authorization: string | undefined): Promise<UserInfo | undefined> {
    const token = bearerToken(authorization);
    const u = token === undefined ? undefined : this.users.get(tokenDigest(token));
    return u && { ...u, groups: [...new Set([...u.groups, AUTHENTICATED_GROUP])] };
  }
}

/** Several authenticators: the first that knows the token answers (kube-apiserver's union). */
export function unionAuthenticator(...all: Authenticator[]): Authenticator {
  return {
    async authenticate(authorization) {
      for (const a of all) {
        const u = await a.authenticate(authorization);
        if (u) return u;
      }
      return undefined;
    },
  };
}
