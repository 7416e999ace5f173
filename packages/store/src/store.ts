import { randomBytes, randomUUID } from "node:crypto";
import {
  AlreadyExistsError,
  BadRequestError,
  ConflictError,
  GoneError,
  InvalidError,
  NotFoundError,
  groupKind,
  matchesRequirements,
  parseApiVersion,
  parseSelector,
  rfc3339,
  type KubeObject,
  type Requirement,
} from "@flotilla/api";
import { Batcher } from "./batcher.js";
import { SEALED_NAMESPACE, type Sealer } from "./seal.js";
import type { Queryable, Sql } from "./db.js";
import { transaction } from "./driver.js";
import { pruneOutbox } from "./outbox.js";
import { STANDARD_INDEXERS } from "./indexers.js";
import { prunePlacementHistory, readPlacementHistory, type PlacementHistoryOptions, type PlacementHistoryRecord, type PlacementHistoryRetention } from "./placement-history.js";

/** Identity of a stored object: its group/kind, namespace ('' when cluster-scoped) and name. */
export interface ObjectRef {
  gk: string;
  namespace?: string;
  name: string;
}

export type Indexer = (obj: KubeObject) => string[];

export interface StoreOptions {
  /** Secondary-index entries per group/kind (queried with `list({index})`), added to STANDARD_INDEXERS. */
  indexers?: Record<string, Indexer>;
  now?: () => Date;
  /** Seals the member credentials on write and opens them on read (see seal.ts); without, they are stored as given. */
  sealer?: Sealer;
  /**
   * Told how long each statement took (seconds), by kind: `write` (a batch of writes, one
   * transaction), `read` (a batch of gets), `list`. Failed statements are told too.
   */
  onStatement?: (statement: "write" | "read" | "list", seconds: number) => void;
  /**
   * The caller's trace context (a W3C traceparent) at the time of a write, or undefined: kept on
   * the write's outbox row, so that its wake-up continues the trace (see @flotilla/runtime tracing).
   */
  traceContext?: () => string | undefined;
  /**
   * Who writes through this store, recorded with every placement change its writes make
   * (`service:<name>`; see `as` for writes on behalf of a user). Absent: not recorded.
   */
  actor?: string;
}

export interface ListOptions {
  namespace?: string;
  /** A parsed selector or its string form ("app=nginx,tier in (a,b)"). */
  labelSelector?: string | Requirement[];
  /** Only objects with this secondary-index entry, e.g. "cluster:member1". */
  index?: string;
  /** At most this many items, with a `continue` token when there are more (Kubernetes' `limit`); absent or 0 = all. */
  limit?: number;
  /** The `continue` token of the previous page: the list goes on after that page's last object. */
  continue?: string;
}

/**
 * One list, or one page of it, in (namespace, name) order.
 *
 * Paging follows Kubernetes, except that later pages are not read from the first page's
 * snapshot (Postgres cannot go back to it once that page's transaction has ended): each page
 * reads the objects as they are now, after the previous page's last key. Every page carries the
 * first page's resourceVersion, so a watch from it may repeat changes the pages already showed;
 * level-triggered clients are unaffected.
 */
export interface ListResult<T> {
  items: T[];
  /** Watch from here to see every change after this list (some may repeat). */
  resourceVersion: string;
  /** Set when there are more items: pass it as `continue` to get the next page. */
  continue?: string;
  /** With `continue`, how many objects follow this page; unset when a label selector makes it unknown (as Kubernetes). */
  remainingItemCount?: number;
}

/** A whole list read a batch at a time: iterate it for the items; `resourceVersion` as in ListResult. */
export interface ListStream<T> extends AsyncIterable<T> {
  readonly resourceVersion: string;
}

export interface ListStreamOptions extends Omit<ListOptions, "limit"> {
  /** Rows read per query (default 500). */
  batch?: number;
}

export interface WriteOptions {
  /** Optimistic concurrency: fail with ConflictError unless the stored resourceVersion equals this. */
  resourceVersion?: string;
  /** Precondition on the uid (delete). */
  uid?: string;
}

export interface WatchEvent<T = KubeObject> {
  type: "ADDED" | "MODIFIED" | "DELETED";
  object: T;
}

export interface WatchOptions extends ListOptions {
  /** Deliver changes after this resourceVersion; absent = from now on. */
  resourceVersion?: string;
  signal?: AbortSignal;
  /** Told of each poll, and asked for polls: for a caller that must know the watch has caught up. */
  progress?: WatchProgress;
}

/**
 * A watch's polls, as Kubernetes' progress notifications tell a watcher how far it has come: a
 * caller that reads from what a watch delivered (an informer) and must see every change committed
 * before it asked calls `caughtUp()`, which makes the watch poll at once and resolves after a poll
 * begun after the call: true when that poll left no committed change of the watched kinds
 * undelivered. A watch delivers only the changes below its snapshot's xmin (so it never passes
 * a transaction still open); a change committed above it, behind an older transaction still open,
 * makes the answer false for now, and the caller reads the store itself.
 * The same object may serve the successive watches of one follower (after an error, the next).
 */
export class WatchProgress {
  private started = 0;
  private readonly waiting: { after: number; resolve: (caughtUp: boolean) => void }[] = [];
  private pollNow?: () => void;

  caughtUp(): Promise<boolean> {
    return new Promise((resolve) => {
      this.waiting.push({ after: this.started, resolve });
      this.pollNow?.();
    });
  }

  /** Whether someone waits for a poll (the watch then asks for what lies above its xmin). */
  get wanted(): boolean {
    return this.waiting.length > 0;
  }

  /** The watch: how to make it poll now. */
  attach(pollNow: (() => void) | undefined): void {
    this.pollNow = pollNow;
    if (pollNow && this.waiting.length) pollNow();
  }

  /** The watch: a poll begins; returns its number. */
  pollStarted(): number {
    return ++this.started;
  }

  /** The watch: poll `n` ended, leaving (`caughtUp` false) or not changes of its kinds undelivered. */
  pollEnded(n: number, caughtUp: boolean): void {
    for (let i = this.waiting.length - 1; i >= 0; i--) {
      const w = this.waiting[i]!;
      if (n <= w.after) continue;
      this.waiting.splice(i, 1);
      w.resolve(caughtUp);
    }
  }
}

/** The group/kind of an object from its apiVersion and kind. */
export function gkOf(obj: { apiVersion: string; kind: string }): string {
  return groupKind({ group: parseApiVersion(obj.apiVersion).group, kind: obj.kind });
}

export function refOf(obj: KubeObject): ObjectRef {
  return { gk: gkOf(obj), namespace: obj.metadata.namespace ?? "", name: obj.metadata.name ?? "" };
}

function refError(ref: ObjectRef) {
  const [group, kind] = splitGk(ref.gk);
  return { group, kind, name: ref.name };
}

function splitGk(gk: string): [string, string] {
  const i = gk.lastIndexOf("/");
  return [gk.slice(0, i), gk.slice(i + 1)];
}

const TOP_ORDER = ["apiVersion", "kind", "metadata", "spec", "status"];
const META_ORDER = ["name", "generateName", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations", "ownerReferences", "finalizers"];

function orderKeys<T extends Record<string, unknown>>(o: T, first: string[]): T {
  const out: Record<string, unknown> = {};
  for (const k of first) if (k in o) out[k] = o[k];
  for (const k of Object.keys(o)) if (!(k in out)) out[k] = o[k];
  return out as T;
}

/** Postgres' jsonb reorders keys; objects are served in the order Kubernetes writes them. */
/** A sealed object opened, or (key missing, tampered) without values and annotated with why: one bad Secret must not fail a list. */
function openOrMark<T extends KubeObject>(sealer: Sealer, o: T): T {
  try {
    return sealer.open(o);
  } catch (e) {
    const { sealed: _s, ...rest } = o as Record<string, unknown>;
    const meta = o.metadata;
    return { ...rest, metadata: { ...meta, annotations: { ...meta.annotations, "flotilla.io/sealed-unreadable": (e as Error).message } } } as unknown as T;
  }
}

export function canonical<T extends KubeObject>(o: T): T {
  const out = orderKeys(o, TOP_ORDER);
  if (o.metadata) out.metadata = orderKeys(o.metadata as Record<string, unknown>, META_ORDER);
  return out;
}

const GENERATE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789";
function generateSuffix(): string {
  const b = randomBytes(5);
  return Array.from(b, (x) => GENERATE_ALPHABET[x % GENERATE_ALPHABET.length]).join("");
}

const MAX_RV_RETRIES = 5;

/** One write for flotilla_write_batch (see migrations/004): the database decides the result. */
interface WriteOp {
  op: "create" | "update" | "delete";
  /** What an update replaces: the object but its status, the status alone, or both. */
  part?: "spec" | "status" | "all";
  ref: ObjectRef;
  /** The resourceVersion the change was computed from; null writes over whatever is stored. */
  expectedRv: string | null;
  /** A uid precondition. */
  uid?: string | null;
  body?: KubeObject;
  /** The caller's trace context (W3C traceparent), stored on the write's outbox row. */
  trace?: string;
  /** Who writes (see StoreOptions.actor), recorded with a placement change the write makes. */
  actor?: string;
}

interface WriteResult {
  code: string;
  body?: KubeObject;
}

/** Errors after which a batch is simply sent again: a cascade met a newer version (FL001), a deadlock between batches. */
const RETRY_CODES = new Set(["FL001", "40P01"]);

/**
 * The expected resourceVersion of a write as the database compares it (a bigint): one that is no
 * positive 64-bit decimal (a client's "abc") matches no object, so it is sent as 0, which no
 * object has (resourceVersions are transaction ids) and fails like any stale one (409 Conflict,
 * or 404 when the object is gone). Sent as it is, it would fail its cast and with it every write
 * batched in the same statement.
 */
function expectedVersion(rv: unknown): string | null {
  if (rv === undefined || rv === null || rv === "") return null;
  return typeof rv === "string" && /^[1-9][0-9]{0,18}$/.test(rv) && BigInt(rv) <= 9223372036854775807n ? rv : "0";
}

const lockOrder = (op: WriteOp) => `${op.ref.gk}\u0000${op.ref.namespace ?? ""}\u0000${op.ref.name}`;

/** Rows per list query (a page reads `limit + 1` first and doubles up to this while the selector filters rows out). */
const MAX_BATCH = 500;

/** An object's place in list order. */
interface Key {
  namespace: string;
  name: string;
}

interface ListFilter {
  gk: string;
  namespace?: string;
  index?: string;
  reqs: Requirement[];
  /** The selector's single-value `In` requirements, matched in SQL; the rest are matched on the rows read. */
  equal: Record<string, string>;
}

function requirementsOf(selector: ListOptions["labelSelector"]): Requirement[] {
  return typeof selector === "string" ? parseSelector(selector) : (selector ?? []);
}

function listFilter(gk: string, opts: ListOptions): ListFilter {
  const reqs = requirementsOf(opts.labelSelector);
  const equal: Record<string, string> = {};
  for (const r of reqs) if (r.operator === "In" && r.values.length === 1) equal[r.key] = r.values[0]!;
  return { gk, namespace: opts.namespace || undefined, index: opts.index, reqs, equal };
}

function checkLimit(limit: number | undefined): number {
  if (limit === undefined) return 0;
  if (!Number.isSafeInteger(limit) || limit < 0) {
    throw new InvalidError({ group: "meta.k8s.io", kind: "ListOptions" }, [{ field: "limit", reason: "FieldValueInvalid", message: "must be a non-negative integer" }]);
  }
  return limit;
}

/** The opaque continue token: base64url JSON of the list's resourceVersion and the last key served. */
interface ContinueToken {
  rv: string;
  namespace: string;
  name: string;
}

function encodeContinue(t: ContinueToken): string {
  return Buffer.from(JSON.stringify({ rv: t.rv, ns: t.namespace, name: t.name })).toString("base64url");
}

function decodeContinue(s: string): { rv: string; after: Key } {
  let t: unknown;
  try {
    t = JSON.parse(Buffer.from(s, "base64url").toString("utf8"));
  } catch {
    t = undefined;
  }
  const o = t as { rv?: unknown; ns?: unknown; name?: unknown } | undefined;
  if (!o || typeof o.rv !== "string" || !/^\d+$/.test(o.rv) || typeof o.ns !== "string" || typeof o.name !== "string" || !o.name) {
    throw new BadRequestError("invalid continue token: pass the metadata.continue of the previous page unchanged", [
      { field: "continue", reason: "FieldValueInvalid", message: "not a continue token returned by the server" },
    ]);
  }
  return { rv: o.rv, after: { namespace: o.ns, name: o.name } };
}

/** The resourceVersion of a new list (now), or of the list a continue token belongs to (410 Gone once its history is pruned). */
async function listResourceVersion(q: Queryable, token: { rv: string } | undefined): Promise<string> {
  if (!token) {
    const [{ rv }] = await q<{ rv: string }[]>`SELECT (pg_snapshot_xmin(pg_current_snapshot())::text::bigint - 1)::text AS rv`;
    return rv;
  }
  const [{ pruned }] = await q<{ pruned: string }[]>`SELECT pruned_rv::text AS pruned FROM outbox_watermark`;
  if (BigInt(token.rv) < BigInt(pruned)) {
    throw new GoneError("The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.");
  }
  return token.rv;
}

/** The label and index conditions alone (the selective ones a GIN index answers). */
function indexedWhere(q: Queryable, f: ListFilter) {
  return q`${Object.keys(f.equal).length ? q`labels @> ${q.json(f.equal)}` : q`true`}
    ${f.index ? q`AND index_keys @> ARRAY[${f.index}]::text[]` : q``}`;
}

function listWhere(q: Queryable, f: ListFilter, after: Key | undefined) {
  return q`gk = ${f.gk}
    ${f.namespace ? q`AND namespace = ${f.namespace}` : q``}
    ${Object.keys(f.equal).length ? q`AND labels @> ${q.json(f.equal)}` : q``}
    ${f.index ? q`AND index_keys @> ARRAY[${f.index}]::text[]` : q``}
    ${after ? q`AND (gk, namespace, name) > (${f.gk}, ${after.namespace}, ${after.name})` : q``}`;
}

/**
 * The objects after `after` in (namespace, name) order that match the filter, read by keyset
 * queries of `first` rows, doubling up to MAX_BATCH: only one batch is held at a time.
 */
async function* scan<T extends KubeObject>(q: Queryable, f: ListFilter, after: Key | undefined, first: number, open: <X extends KubeObject>(o: X) => X): AsyncGenerator<{ key: Key; obj: T }> {
  let cursor = after;
  for (let n = Math.min(first, MAX_BATCH); ; n = Math.min(n * 2, MAX_BATCH)) {
    const rows = await q<{ namespace: string; name: string; body: T }[]>`
      SELECT namespace, name, body FROM objects WHERE ${listWhere(q, f, cursor)} ORDER BY namespace, name LIMIT ${n}`;
    for (const r of rows) {
      if (matchesRequirements(r.body.metadata.labels, f.reqs)) yield { key: { namespace: r.namespace, name: r.name }, obj: open(r.body) };
    }
    if (rows.length < n) return;
    const last = rows[rows.length - 1]!;
    cursor = { namespace: last.namespace, name: last.name };
  }
}

async function countAfter(q: Queryable, f: ListFilter, after: Key): Promise<number> {
  const [{ n }] = await q<{ n: number }[]>`SELECT count(*)::int AS n FROM objects WHERE ${listWhere(q, f, after)}`;
  return n;
}

/** Outbox rows a watch reads per poll at most. */
const TAIL_BATCH = 500;

/**
 * The object store on Postgres. A write is decided in the database under the object's advisory
 * lock (flotilla_apply): the transaction id becomes the new resourceVersion (so an object's
 * resourceVersions grow in commit order), the stored version must be the one the change was
 * computed from, and an outbox row goes with it. Writes (and reads) that callers make at about
 * the same time share one statement and one transaction (Batcher). Watches read the outbox in
 * resourceVersion order, releasing a row only once every transaction that could still write a
 * smaller one has finished.
 */
export class ObjectStore {
  private readonly indexers: Record<string, Indexer>;
  private readonly now: () => Date;
  /** The stored form of an object (credentials sealed) and the form callers see (opened, keys in canonical order). */
  private readonly seal: <X extends KubeObject>(o: X) => X;
  private readonly open: <X extends KubeObject>(o: X) => X;
  private readonly sealer?: Sealer;
  private readonly writer: Batcher<WriteOp, WriteResult>;
  private readonly reader: Batcher<ObjectRef, KubeObject | undefined>;
  private readonly lister: Batcher<ListFilter, { rv: string; bodies: KubeObject[] }>;
  private readonly traceContext?: () => string | undefined;
  private readonly actor?: string;
  private readonly timed: <R>(statement: "write" | "read" | "list", run: () => Promise<R>) => Promise<R>;

  constructor(
    private readonly sql: Sql,
    opts: StoreOptions = {},
  ) {
    // the standard indexes are always kept (every writer of a kind must index it alike); extra ones add entries
    const extra = opts.indexers ?? {};
    this.indexers = { ...STANDARD_INDEXERS };
    for (const [gk, fn] of Object.entries(extra)) {
      const std = STANDARD_INDEXERS[gk];
      this.indexers[gk] = std && std !== fn ? (o) => [...std(o), ...fn(o)] : fn;
    }
    this.now = opts.now ?? (() => new Date());
    const sealer = opts.sealer;
    this.seal = sealer ? (o) => sealer.seal(o) : (o) => o;
    this.open = sealer ? (o) => canonical(openOrMark(sealer, o)) : canonical;
    this.sealer = sealer;
    this.traceContext = opts.traceContext;
    this.actor = opts.actor || undefined;
    const told = opts.onStatement;
    this.timed = told
      ? (statement, run) => {
          const t0 = performance.now();
          return run().finally(() => told(statement, (performance.now() - t0) / 1000));
        }
      : (_statement, run) => run();
    // writes and reads made at about the same time share a statement (see Batcher), with up to
    // half the pool's connections each in flight (measured: a quarter each cut throughput by a
    // third); lists, watches and timers are pipelined onto the same connections meanwhile
    const pool = (sql.options as { max?: number }).max ?? 8;
    const inFlight = Math.max(1, Math.floor(pool / 2));
    const write = (ops: WriteOp[]) => this.timed("write", () => this.writeBatch(ops));
    this.writer = new Batcher(write, { maxBatch: 100, maxInFlight: inFlight }, (op) => write([op]).then((r) => r[0]!));
    this.reader = new Batcher((refs) => this.timed("read", () => this.readBatch(refs)), { maxBatch: 500, maxInFlight: inFlight });
    this.lister = new Batcher((fs) => this.timed("list", () => this.listBatch(fs)), { maxBatch: 200, maxInFlight: inFlight });
  }

  /**
   * This store with its writes made on behalf of `actor` (e.g. `user:alice`): the same
   * connections, batches and options, only the recorded writer differs.
   */
  as(actor: string): ObjectStore {
    return Object.assign(Object.create(this) as ObjectStore, { actor: actor || undefined });
  }

  /**
   * The placement changes of a binding (ResourceBinding or ClusterResourceBinding), oldest
   * first: the newest `limit`, younger than `maxAgeMs`. NotFoundError when there is no such object.
   */
  async placementHistory(ref: ObjectRef, opts: PlacementHistoryOptions = {}): Promise<{ uid: string; records: PlacementHistoryRecord[] }> {
    const r = await readPlacementHistory(this.sql, { gk: ref.gk, namespace: ref.namespace ?? "", name: ref.name }, opts);
    if (!r) throw new NotFoundError(refError(ref));
    return r;
  }

  /** Drops placement changes past the retention (by age, and per binding by count); returns how many. */
  prunePlacementHistory(retention: PlacementHistoryRetention): Promise<number> {
    return prunePlacementHistory(this.sql, retention);
  }

  async get<T extends KubeObject = KubeObject>(ref: ObjectRef): Promise<T | undefined> {
    return this.reader.submit(ref) as Promise<T | undefined>;
  }

  async mustGet<T extends KubeObject = KubeObject>(ref: ObjectRef): Promise<T> {
    const o = await this.get<T>(ref);
    if (!o) throw new NotFoundError(refError(ref));
    return o;
  }

  /**
   * The objects of a kind, or with `limit` one page of them (see ListResult for the paging
   * semantics). The first page (or the whole list) is one snapshot. A malformed `continue` is a
   * BadRequestError, one whose resourceVersion is older than the retained watch history a
   * GoneError (as Kubernetes: a watch from it could not resume), a bad `limit` an InvalidError.
   */
  async list<T extends KubeObject = KubeObject>(gk: string, opts: ListOptions = {}): Promise<ListResult<T>> {
    const f = listFilter(gk, opts);
    const limit = checkLimit(opts.limit);
    const token = opts.continue === undefined || opts.continue === "" ? undefined : decodeContinue(opts.continue);
    if (!limit && !token && !f.index && Object.keys(f.equal).length > 0) {
      // by labels (a binding's Works, say): lists made at about the same time share a statement
      const r = await this.lister.submit(f);
      const items: T[] = [];
      for (const body of r.bodies) if (matchesRequirements(body.metadata.labels, f.reqs)) items.push(this.open(body as T));
      return { items, resourceVersion: r.rv };
    }
    return this.timed("list", () => this.listOnce<T>(f, limit, token));
  }

  private async listOnce<T extends KubeObject>(f: ListFilter, limit: number, token: ReturnType<typeof decodeContinue> | undefined): Promise<ListResult<T>> {
    if (!limit && !token) {
      // the whole list in one statement: its snapshot gives both the rows and the resourceVersion
      const q = this.sql;
      const selective = !!f.index || Object.keys(f.equal).length > 0;
      const rows = await q<{ rv: string; body: T | null }[]>`
        SELECT s.rv, o.body
        FROM (SELECT (pg_snapshot_xmin(pg_current_snapshot())::text::bigint - 1)::text AS rv) s
        LEFT JOIN LATERAL (${
          selective
            ? // found through the label or index entry first: left to choose, the planner (on statistics
              // that lag a burst) combines it with a scan of the whole kind in the primary key
              q`WITH c AS MATERIALIZED (SELECT gk, namespace, name, body FROM objects WHERE ${indexedWhere(q, f)})
                SELECT body FROM c WHERE gk = ${f.gk} ${f.namespace ? q`AND namespace = ${f.namespace}` : q``} ORDER BY namespace, name`
            : q`SELECT body FROM objects WHERE ${listWhere(q, f, undefined)} ORDER BY namespace, name`
        }) o ON true`;
      const items: T[] = [];
      for (const r of rows) if (r.body && matchesRequirements(r.body.metadata.labels, f.reqs)) items.push(this.open(r.body));
      return { items, resourceVersion: rows[0]!.rv };
    }
    return transaction(this.sql, async (tx) => {
      const resourceVersion = await listResourceVersion(tx, token);
      const items: T[] = [];
      let last: Key | undefined;
      // one more than the page, to know whether there is a next one
      for await (const { key, obj } of scan<T>(tx, f, token?.after, limit ? limit + 1 : MAX_BATCH, this.open)) {
        if (limit && items.length === limit) {
          const remainingItemCount = f.reqs.length ? undefined : await countAfter(tx, f, last!);
          return { items, resourceVersion, continue: encodeContinue({ rv: resourceVersion, ...last! }), remainingItemCount };
        }
        items.push(obj);
        last = key;
      }
      return { items, resourceVersion };
    }, "ISOLATION LEVEL REPEATABLE READ READ ONLY") as Promise<ListResult<T>>;
  }

  /**
   * The whole list without holding it: the items are read `batch` rows at a time, each batch in
   * a query of its own (no connection is held between batches), so the list is not one
   * snapshot; `resourceVersion` is taken before the first batch (a watch from it sees every
   * later change, some again). Validates the options and the `continue` token before returning.
   */
  async listStream<T extends KubeObject = KubeObject>(gk: string, opts: ListStreamOptions = {}): Promise<ListStream<T>> {
    const f = listFilter(gk, opts);
    const token = opts.continue === undefined || opts.continue === "" ? undefined : decodeContinue(opts.continue);
    const resourceVersion = await listResourceVersion(this.sql, token);
    const sql = this.sql;
    const open = this.open;
    const batch = Math.max(1, opts.batch ?? MAX_BATCH);
    return {
      resourceVersion,
      async *[Symbol.asyncIterator]() {
        for await (const { obj } of scan<T>(sql, f, token?.after, batch, open)) yield obj;
      },
    };
  }

  /** Creates the object; AlreadyExistsError when the name is taken. */
  async create<T extends KubeObject>(input: T): Promise<T> {
    // a generated name can collide (birthday odds of 5 characters): draw again, as the apiserver's callers do
    for (let attempt = 0; !input.metadata.name && input.metadata.generateName && attempt < 8; attempt++) {
      try {
        return await this.createOnce({ ...input, metadata: { ...input.metadata, name: input.metadata.generateName + generateSuffix() } });
      } catch (e) {
        if (!(e instanceof AlreadyExistsError)) throw e;
      }
    }
    return this.createOnce(input);
  }

  private async createOnce<T extends KubeObject>(input: T): Promise<T> {
    const meta = { ...input.metadata };
    if (!meta.name) {
      throw new InvalidError(refError({ gk: gkOf(input), name: "" }), [
        { field: "metadata.name", reason: "FieldValueRequired", message: "name or generateName is required" },
      ]);
    }
    const ref: ObjectRef = { gk: gkOf(input), namespace: meta.namespace ?? "", name: meta.name };
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    const obj = { ...input, metadata: { ...meta, uid: randomUUID(), creationTimestamp: rfc3339(this.now()), generation: 1, resourceVersion: "" } } as T;
    const r = await this.call({ op: "create", ref, expectedRv: null, body: obj });
    if (r.code === "exists") throw new AlreadyExistsError(refError(ref));
    return r.body as T;
  }

  /**
   * Replaces the object except its status (kept as stored). The expected resourceVersion is
   * `metadata.resourceVersion` when set (ConflictError on mismatch); empty means unconditional.
   * Removing the last finalizer of a deleting object deletes it.
   */
  async update<T extends KubeObject>(obj: T): Promise<T> {
    return this.replace(obj, "spec");
  }

  /** Replaces only `.status`. */
  async updateStatus<T extends KubeObject>(obj: T): Promise<T> {
    return this.replace(obj, "status");
  }

  /**
   * Replaces the object and its status in one write (what `update` then `updateStatus` would
   * do, without the moment in between). For a controller that owns both parts of a decision.
   */
  async updateWithStatus<T extends KubeObject>(obj: T): Promise<T> {
    return this.replace(obj, "all");
  }

  private async replace<T extends KubeObject>(obj: T, part: "spec" | "status" | "all"): Promise<T> {
    const ref = refOf(obj);
    const r = await this.call({ op: "update", part, ref, expectedRv: expectedVersion(obj.metadata.resourceVersion), uid: obj.metadata.uid || null, body: obj });
    return this.outcome(ref, r, obj.metadata.uid) as T;
  }

  /**
   * Deletes the object: at once when it has no finalizers (its owned objects follow), else
   * marks it with deletionTimestamp and leaves it to the finalizers' owners. Returns the
   * object as of after the call.
   */
  async delete(ref: ObjectRef, opts: WriteOptions = {}): Promise<KubeObject | undefined> {
    const r = await this.call({ op: "delete", ref, expectedRv: expectedVersion(opts.resourceVersion), uid: opts.uid || null });
    return this.outcome(ref, r, opts.uid);
  }

  /** The object a write left (ok or unchanged), or the error its code means. */
  private outcome(ref: ObjectRef, r: WriteResult, uid: string | null | undefined): KubeObject {
    switch (r.code) {
      case "ok":
      case "unchanged":
        return r.body!;
      case "notfound":
        throw new NotFoundError(refError(ref));
      case "uid":
        throw new ConflictError(refError(ref), `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${r.body?.metadata.uid}`);
      default:
        throw new ConflictError(refError(ref));
    }
  }

  /**
   * Read-decide-write with retries on conflict, the one way a controller changes an object it
   * read: `decide` gets a copy of the current object (the caller's `first` copy on the first try,
   * when it has just read it) and returns the desired object, or undefined for "nothing to do".
   * The write carries the resourceVersion the decision was made on; on a conflict the object is
   * read again and decided again at once (no backoff: the conflict means there is news), up to
   * `attempts` (10) times. `decide` may be async (it may read other objects) and is called once
   * per attempt, so anything it records for the caller describes the attempt that was written.
   * Returns the stored object (the current one when nothing was written, undefined when it is
   * gone) and whether this call wrote it.
   */
  async mutateWritten<T extends KubeObject>(
    ref: ObjectRef,
    decide: (current: T) => T | undefined | Promise<T | undefined>,
    opts: { status?: boolean; attempts?: number; first?: T } = {},
  ): Promise<{ obj: T | undefined; written: boolean }> {
    let cur = opts.first;
    for (let attempt = 1; ; attempt++) {
      cur ??= await this.get<T>(ref);
      if (!cur) return { obj: undefined, written: false };
      const next = await decide(structuredClone(cur));
      if (!next) return { obj: cur, written: false };
      next.metadata.resourceVersion = cur.metadata.resourceVersion;
      try {
        return { obj: opts.status ? await this.updateStatus(next) : await this.update(next), written: true };
      } catch (e) {
        if (e instanceof NotFoundError) return { obj: undefined, written: false };
        if (!(e instanceof ConflictError) || attempt >= (opts.attempts ?? 10)) throw e;
        cur = undefined;
      }
    }
  }

  /**
   * Create-or-update with retries, mutateWritten's sibling for objects that may not exist yet:
   * `decide` gets a copy of the current object, or undefined when there is none, and returns
   * the object to write (created when there was none, else updated with the resourceVersion
   * read) or undefined for "nothing to do". A create that finds the object made meanwhile, or an
   * update that conflicts, reads and decides again at once, up to `attempts` (10) times.
   * `first`: the caller's fresh copy for the first try (null: it knows there was none), which
   * then skips the read. Returns the stored object (the current one when nothing was written) and whether this
   * call created or updated it.
   */
  async upsert<T extends KubeObject>(
    ref: ObjectRef,
    decide: (current: T | undefined) => T | undefined | Promise<T | undefined>,
    opts: { attempts?: number; first?: T | null } = {},
  ): Promise<{ obj: T | undefined; written: "created" | "updated" | undefined }> {
    for (let attempt = 1; ; attempt++) {
      const cur = attempt === 1 && opts.first !== undefined ? (opts.first ?? undefined) : await this.get<T>(ref);
      const next = await decide(cur && structuredClone(cur));
      if (!next) return { obj: cur, written: undefined };
      try {
        if (!cur) return { obj: await this.create(next), written: "created" };
        next.metadata.resourceVersion = cur.metadata.resourceVersion;
        return { obj: await this.update(next), written: "updated" };
      } catch (e) {
        const raced = e instanceof AlreadyExistsError || e instanceof ConflictError || (cur !== undefined && e instanceof NotFoundError);
        if (!raced || attempt >= (opts.attempts ?? 10)) throw e;
      }
    }
  }

  /** mutateWritten's object alone: the stored result, the current object when nothing changed, undefined when it is gone. */
  async mutate<T extends KubeObject>(ref: ObjectRef, decide: (current: T) => T | undefined | Promise<T | undefined>, opts: { status?: boolean; attempts?: number; first?: T } = {}): Promise<T | undefined> {
    return (await this.mutateWritten(ref, decide, opts)).obj;
  }

  /**
   * Writes again every member credential stored in clear or sealed with a key other than the
   * current one (after a key is added or rotated); returns how many. A concurrent write wins
   * (it seals with the current key itself).
   */
  async resealCredentials(): Promise<number> {
    const sealer = this.sealer;
    if (!sealer) return 0;
    const rows = await this.sql<{ name: string; body: KubeObject }[]>`
      SELECT name, body FROM objects WHERE gk = '/Secret' AND namespace = ${SEALED_NAMESPACE}`;
    let n = 0;
    for (const r of rows) {
      const b = r.body as Record<string, unknown>;
      const clear = b.sealed === undefined && (b.data !== undefined || b.stringData !== undefined);
      if (!clear && !sealer.stale(r.body)) continue;
      try {
        await this.update(this.open(r.body));
        n++;
      } catch (e) {
        if (!(e instanceof ConflictError) && !(e instanceof NotFoundError)) throw e;
      }
    }
    return n;
  }

  /**
   * Streams changes of one or more kinds (all kinds: undefined) in resourceVersion order,
   * starting after `resourceVersion` (or now).
   * Rejects at once with GoneError when that resourceVersion is older than the retained
   * history, or InvalidError when it is not one.
   */
  async watch<T extends KubeObject = KubeObject>(gk: string | readonly string[] | undefined, opts: WatchOptions = {}): Promise<AsyncGenerator<WatchEvent<T>>> {
    let cursorRv: string;
    const [{ pruned, xmin }] = await this.sql<{ pruned: string; xmin: string }[]>`
      SELECT pruned_rv::text AS pruned, (pg_snapshot_xmin(pg_current_snapshot())::text::bigint - 1)::text AS xmin FROM outbox_watermark`;
    if (opts.resourceVersion && opts.resourceVersion !== "0") {
      if (!/^\d+$/.test(opts.resourceVersion)) {
        throw new InvalidError({ group: "", kind: "WatchOptions" }, [{ field: "resourceVersion", reason: "FieldValueInvalid", message: "must be a resourceVersion returned by the server" }]);
      }
      if (BigInt(opts.resourceVersion) < BigInt(pruned)) throw new GoneError(`too old resource version: ${opts.resourceVersion} (${pruned})`);
      cursorRv = opts.resourceVersion;
    } else {
      cursorRv = xmin;
    }
    return this.tail<T>(gk, opts, cursorRv);
  }

  private async *tail<T extends KubeObject>(gk: string | readonly string[] | undefined, opts: WatchOptions, fromRv: string): AsyncGenerator<WatchEvent<T>> {
    const gks = gk === undefined ? undefined : typeof gk === "string" ? [gk] : [...gk];
    const reqs = requirementsOf(opts.labelSelector);
    let cursorRv = fromRv;
    const LAST_ID = "9223372036854775807";
    let cursorId = LAST_ID; // everything at the starting resourceVersion has been seen
    // the newest write of a watched kind that a NOTIFY announced and no poll has shown yet (a
    // transaction begun before it and still open holds the snapshot's xmin below it): until
    // then a notice of any kind is a reason to poll again, as it may come from that transaction
    const want = gks ? new Set(gks) : undefined;
    let awaited = 0n;
    const waiter = new OutboxWaiter(this.sql, opts.signal, (payload) => {
      const note = parseOutboxNotice(payload);
      if (!want || !note.kinds || note.kinds.some((k) => want.has(k))) {
        if (note.rv === undefined) awaited = -1n;
        else if (awaited >= 0n && note.rv > awaited) awaited = note.rv;
        return true;
      }
      return awaited !== 0n;
    });
    const progress = opts.progress;
    progress?.attach(() => waiter.poke());
    try {
      while (!opts.signal?.aborted) {
        // The rows of the watched kinds after the cursor, and the snapshot's xmin: every row below
        // it is committed (or never will be), so once a poll is not cut short by its LIMIT the
        // cursor moves up to it even when no row matched. Otherwise a watch of a kind that rarely
        // changes would scan every other kind's rows since its last event at each poll.
        const ofKinds = this.sql`${gks ? this.sql`AND gk = ANY(${gks}::text[])` : this.sql``} ${opts.namespace ? this.sql`AND namespace = ${opts.namespace}` : this.sql``}`;
        // asked whether it has caught up: also whether a change committed above the xmin waits
        const asked = progress?.wanted ? progress.pollStarted() : undefined;
        const rows = await this.sql<{ id: string | null; rv: string | null; type: WatchEvent["type"]; object: T; xmin: string; ahead: boolean | null }[]>`
          WITH s AS (SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint AS xmin),
          r AS (
            SELECT id, rv, type, object FROM outbox, s
            WHERE (rv, id) > (${cursorRv}::bigint, ${cursorId}::bigint)
              AND rv < s.xmin
              ${ofKinds}
            ORDER BY outbox.rv, outbox.id LIMIT ${TAIL_BATCH}
          )
          SELECT r.id::text, r.rv::text, r.type, r.object, s.xmin::text AS xmin,
                 ${asked !== undefined ? this.sql`EXISTS (SELECT 1 FROM outbox WHERE rv >= s.xmin ${ofKinds})` : this.sql`NULL::boolean`} AS ahead
          FROM s LEFT JOIN r ON true ORDER BY r.rv, r.id`;
        let n = 0;
        for (const r of rows) {
          if (r.id === null || r.rv === null) continue;
          n++;
          cursorRv = r.rv;
          cursorId = r.id;
          if (matchesRequirements(r.object.metadata.labels, reqs)) yield { type: r.type, object: this.open(r.object) };
        }
        const below = rows[0] ? BigInt(rows[0].xmin) - 1n : undefined;
        if (below !== undefined && (awaited === -1n || awaited <= below)) awaited = 0n;
        if (n < TAIL_BATCH && below !== undefined && below >= BigInt(cursorRv)) {
          cursorRv = String(below);
          cursorId = LAST_ID;
        }
        // (the events of this poll are delivered: the generator ran to here after the last one was taken)
        if (asked !== undefined) progress!.pollEnded(asked, n < TAIL_BATCH && rows[0]?.ahead === false);
        if (n < TAIL_BATCH) await waiter.wait(awaited !== 0n ? 20 : 250);
      }
    } finally {
      progress?.attach(undefined);
      waiter.close();
    }
  }

  /**
   * Drops published outbox rows older than `olderThanMs`, raising the watch watermark; never one
   * a watch could not have read yet, so the watermark stays below every new list's resourceVersion.
   */
  async pruneOutbox(olderThanMs: number): Promise<number> {
    return pruneOutbox(this.sql, { retentionMs: olderThanMs });
  }

  // ---- write plumbing: writes of one moment in one statement (see migrations/004_write_batch.sql) ----

  private call(op: WriteOp): Promise<WriteResult> {
    const trace = this.traceContext?.();
    const withActor = this.actor ? { ...op, actor: this.actor } : op;
    return this.writer.submit(trace ? { ...withActor, trace } : withActor);
  }

  /** One flotilla_write_batch statement for many writes, in lock order (so batches never wait on each other in a circle). */
  private async writeBatch(ops: WriteOp[]): Promise<WriteResult[]> {
    const order = ops.map((_, i) => i);
    if (ops.length > 1) order.sort((a, b) => (lockOrder(ops[a]!) < lockOrder(ops[b]!) ? -1 : lockOrder(ops[a]!) > lockOrder(ops[b]!) ? 1 : a - b));
    const now = rfc3339(this.now());
    const payload = order.map((i) => {
      const o = ops[i]!;
      const op = { op: o.op, part: o.part, gk: o.ref.gk, ns: o.ref.namespace ?? "", name: o.ref.name, rv: o.expectedRv, uid: o.uid ?? null, body: o.body ? this.seal(o.body) : null, index: o.body ? this.indexKeys(o.ref.gk, o.body) : [], now };
      const withActor = o.actor ? { ...op, actor: o.actor } : op;
      return o.trace ? { ...withActor, trace: o.trace } : withActor;
    });
    for (let attempt = 0; ; attempt++) {
      try {
        const rows = await this.sql<{ i: number; code: string; body: KubeObject | null }[]>`
          SELECT i, code, body FROM flotilla_write_batch(${this.sql.json(payload as never)})`;
        // a batch that wrote wakes the relay and the watches itself (NOTIFY flotilla_outbox, migration 012)
        const out = new Array<WriteResult>(ops.length);
        for (const r of rows) out[order[r.i]!] = { code: r.code, body: r.body ? this.open(r.body) : undefined };
        return out;
      } catch (e) {
        // a cascaded dependent written by a newer transaction, or a deadlock: run again
        if (RETRY_CODES.has((e as { code?: string }).code ?? "") && attempt < MAX_RV_RETRIES) continue;
        throw e;
      }
    }
  }

  /** One statement for many reads; a missing object reads as undefined. */
  private async readBatch(refs: ObjectRef[]): Promise<(KubeObject | undefined)[]> {
    const rows = await this.sql<{ i: string; body: KubeObject | null }[]>`
      SELECT k.i::text AS i, o.body
      FROM unnest(${refs.map((r) => r.gk)}::text[], ${refs.map((r) => r.namespace ?? "")}::text[], ${refs.map((r) => r.name)}::text[])
           WITH ORDINALITY AS k(gk, ns, name, i)
      LEFT JOIN objects o ON o.gk = k.gk AND o.namespace = k.ns AND o.name = k.name`;
    const out = new Array<KubeObject | undefined>(refs.length);
    for (const r of rows) out[Number(r.i) - 1] = r.body ? this.open(r.body) : undefined;
    return out;
  }

  /**
   * Whole lists selected by label equality (no index, no paging), many in one statement and one
   * snapshot: each found through the labels' GIN index first (materialized, so the planner never
   * scans the whole kind instead), in (namespace, name) order.
   */
  private async listBatch(fs: ListFilter[]): Promise<{ rv: string; bodies: KubeObject[] }[]> {
    const rows = await this.sql<{ i: string; rv: string; body: KubeObject | null }[]>`
      SELECT k.i::text AS i, s.rv, o.body
      FROM (SELECT (pg_snapshot_xmin(pg_current_snapshot())::text::bigint - 1)::text AS rv) s
      CROSS JOIN unnest(${fs.map((f) => f.gk)}::text[], ${fs.map((f) => f.namespace ?? "")}::text[], ${fs.map((f) => JSON.stringify(f.equal))}::text[]::jsonb[])
           WITH ORDINALITY AS k(gk, ns, lbl, i)
      LEFT JOIN LATERAL (
        WITH c AS MATERIALIZED (SELECT gk, namespace, name, body FROM objects WHERE labels @> k.lbl)
        SELECT namespace, name, body FROM c WHERE gk = k.gk AND (k.ns = '' OR namespace = k.ns)
      ) o ON true
      ORDER BY k.i, o.namespace, o.name`;
    const out = fs.map(() => ({ rv: rows[0]!.rv, bodies: [] as KubeObject[] }));
    for (const r of rows) if (r.body) out[Number(r.i) - 1]!.bodies.push(r.body);
    return out;
  }

  private indexKeys(gk: string, obj: KubeObject): string[] {
    const keys = (obj.metadata.ownerReferences ?? []).map((o) => `owner:${o.uid}`);
    const extra = this.indexers[gk];
    if (extra) keys.push(...extra(obj));
    return [...new Set(keys)];
  }
}

/**
 * What a NOTIFY on flotilla_outbox says (migration 012): the writing transaction's
 * resourceVersion and the kinds it wrote; `kinds` undefined: any kind (`*`, or a payload in no
 * known form, as a NOTIFY sent by hand).
 */
export function parseOutboxNotice(payload: string): { rv?: bigint; kinds?: string[] } {
  const m = /^(\d+) (\S+)$/.exec(payload);
  if (!m) return {};
  return { rv: BigInt(m[1]!), ...(m[2] === "*" ? {} : { kinds: m[2]!.split(",") }) };
}

/**
 * Wakes a watch loop on an outbox NOTIFY that `relevant` accepts, or after a timeout. A notice
 * that comes while the loop is not waiting (it is polling) is kept for its next wait. One LISTEN
 * per store connection pool.
 */
class OutboxWaiter {
  private static listeners = new WeakMap<Sql, { waiters: Set<(payload: string) => void>; ready: Promise<unknown> }>();
  private wake?: () => void;
  private pending = false;
  private readonly entry: { waiters: Set<(payload: string) => void>; ready: Promise<unknown> };
  private readonly onNotice = (payload: string) => {
    if (this.relevant(payload)) this.poke();
  };

  constructor(
    sql: Sql,
    private readonly signal: AbortSignal | undefined,
    private readonly relevant: (payload: string) => boolean,
  ) {
    let entry = OutboxWaiter.listeners.get(sql);
    if (!entry) {
      const waiters = new Set<(payload: string) => void>();
      const ready = sql.listen("flotilla_outbox", (payload) => {
        for (const w of [...waiters]) w(payload);
      }).catch(() => undefined);
      entry = { waiters, ready };
      OutboxWaiter.listeners.set(sql, entry);
    }
    this.entry = entry;
    entry.waiters.add(this.onNotice);
  }

  async wait(ms: number): Promise<void> {
    await this.entry.ready;
    if (this.pending || this.signal?.aborted) {
      this.pending = false;
      return;
    }
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(t);
        this.wake = undefined;
        this.signal?.removeEventListener("abort", done);
        resolve();
      };
      const t = setTimeout(done, ms);
      this.signal?.addEventListener("abort", done, { once: true });
      this.wake = done;
    });
  }

  /** Ends the wait now (or the next one at once). */
  poke() {
    if (this.wake) this.wake();
    else this.pending = true;
  }

  close() {
    this.entry.waiters.delete(this.onNotice);
    this.wake?.();
  }
}
