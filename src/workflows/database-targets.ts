/**
 * The customers' PostgreSQL databases of `database` workflow actions (contract §6, ADR 014): one
 * small pg pool per connection URL, each event inserted as a row of the named table (rows that
 * arrive together, as a claim round's actions do, by one multi-row INSERT), the table created on
 * first use when absent.
 *
 * A connection URL is customer input and its password a secret, so:
 * - the URL is parsed here and every connection setting is given to pg explicitly: pg would
 *   otherwise fill gaps from this process's environment and files (PGPASSWORD, ~/.pgpass, PGHOST,
 *   `sslrootcert=/path` reading a local file), handing our own credentials or files to a
 *   customer's server. Only `sslmode` is read from the query; other parameters are ignored.
 * - unless private targets are allowed, the host passes the webhook SSRF guard
 *   (`resolvePublicAddresses`) and the pool connects to the checked address, never to the name,
 *   so a name that re-resolves to a private address is never reached. TLS still verifies the
 *   certificate against the name (`servername`).
 * - the URL is a map key only: never logged, never part of an error. Errors are rewritten into
 *   messages an operator can act on and scrubbed of the password.
 *
 * The table name is validated with the config schema's own pattern and double-quoted (so it is
 * taken exactly as written, case included); every value travels as a bound parameter.
 */
import { isIP } from 'node:net';
import pg from 'pg';
import { classifyAddress, type HostLookup, resolvePublicAddresses } from '../outbound/outbound-guard.ts';
import { DatabaseActionConfig } from './action-configs.schemas.ts';
import type { DatabaseEventRow, DatabaseTargets } from './actions/action.ts';

export interface PostgresDatabaseTargetsOptions {
  /** Bound on connecting and on each statement: the worker passes the action timeout. */
  timeoutMs: number;
  /** WEBHOOK_ALLOW_PRIVATE_TARGETS: connect to any host, by name, without the SSRF guard. */
  allowPrivateTargets: boolean;
  /** The guard's DNS resolution and address policy, replaceable in tests. */
  lookup?: HostLookup;
  classify?: (ip: string) => string | null;
  /** A pool unused for this long is closed and dropped; default 5 minutes. */
  idlePoolMs?: number;
  /** How often pools are checked for idleness; default a fifth of `idlePoolMs`, at most a minute. */
  sweepIntervalMs?: number;
  /** The clock idleness is measured with, replaceable in tests. */
  now?: () => number;
  /** What customers see as our sessions' `application_name` in pg_stat_activity. */
  applicationName?: string;
  /** Extra trusted certificate authorities (PEM) for TLS targets, e.g. a private PKI or tests. */
  ca?: string | string[];
}

const DEFAULT_IDLE_POOL_MS = 5 * 60_000;
const MAX_SWEEP_INTERVAL_MS = 60_000;
/**
 * Connections a single target may hold. Rows arriving together share one INSERT, so two suffice:
 * one statement in flight while the next batch gathers.
 */
const MAX_CONNECTIONS_PER_TARGET = 2;
/** Rows per INSERT at most (4 parameters each, far below PostgreSQL's 65,535). */
const MAX_ROWS_PER_INSERT = 500;
/** An open connection nobody used for this long is closed (the pool itself stays). */
const IDLE_CONNECTION_MS = 30_000;
/**
 * The client-side bound on an answer is a little longer than the server's `statement_timeout`,
 * so a slow statement is reported with the server's own explanation; the client-side one still
 * ends a wait on a server or network that went silent.
 */
const CLIENT_GRACE_MS = 1000;
const DEFAULT_PORT = 5432;

/** A failure of a database action, already in words an operator can act on, without secrets. */
export class DatabaseTargetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DatabaseTargetError';
  }
}

// The config schema's own pattern, so that what was accepted on save is what is accepted here.
const TABLE_PATTERN: unknown = (DatabaseActionConfig.properties.table as { pattern?: unknown }).pattern;
if (typeof TABLE_PATTERN !== 'string') throw new Error('the database action config must constrain `table`');
const TABLE_NAME = new RegExp(TABLE_PATTERN);

/** `events` → `"events"`, `crm.events` → `"crm"."events"`; anything else is refused. */
export function quotedTableName(table: string): string {
  if (!TABLE_NAME.test(table)) {
    throw new DatabaseTargetError(
      'Invalid table name: use `name` or `schema.name`, each of letters, digits and underscores (at most 63, not starting with a digit)',
    );
  }
  return table
    .split('.')
    .map((part) => `"${part}"`)
    .join('.');
}

type TlsMode = 'off' | 'verify' | 'no-verify';

const TLS_MODES = new Map<string, TlsMode>(
  Object.entries({
    disable: 'off',
    allow: 'off', // libpq tries without TLS first; pg cannot fall back, so it is taken as "without"
    // As pg itself treats them: TLS with the certificate verified against the host name.
    prefer: 'verify',
    require: 'verify',
    'verify-ca': 'verify',
    'verify-full': 'verify',
    'no-verify': 'no-verify',
  } satisfies Record<string, TlsMode>),
);

/** What a connection URL names, decoded; `password` never leaves this module except to pg. */
interface TargetAddress {
  host: string;
  port: number;
  user: string;
  password: string;
  database: string;
  tls: TlsMode;
  /** `host:port/database`: how messages name the target (no user, no password). */
  label: string;
  /** The URL and its password as written and decoded: scrubbed from every message. */
  secrets: string[];
}

function decoded(part: string, what: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw new DatabaseTargetError(`The connection URL's ${what} has an invalid percent-escape`);
  }
}

export function parseConnectionUrl(connectionUrl: string): TargetAddress {
  let url: URL;
  try {
    url = new URL(connectionUrl);
  } catch {
    throw new DatabaseTargetError('The connection URL is not a valid URL');
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    throw new DatabaseTargetError('The connection URL must start with postgres:// or postgresql://');
  }
  const rawHost = url.hostname;
  const host = rawHost.startsWith('[') && rawHost.endsWith(']') ? rawHost.slice(1, -1) : rawHost;
  // An empty host would mean a local Unix socket to libpq: never a customer's database.
  if (host === '') throw new DatabaseTargetError('The connection URL names no host');
  const port = url.port === '' ? DEFAULT_PORT : Number(url.port);
  const user = decoded(url.username, 'user name');
  if (user === '') throw new DatabaseTargetError('The connection URL names no user');
  const path = decoded(url.pathname.replace(/^\//, ''), 'database name');
  const database = path === '' ? user : path;
  const sslmode = url.searchParams.get('sslmode');
  const tls = sslmode === null ? 'off' : TLS_MODES.get(sslmode);
  if (tls === undefined) {
    throw new DatabaseTargetError(
      `Unknown sslmode in the connection URL: use one of ${[...TLS_MODES.keys()].join(', ')}`,
    );
  }
  return {
    host,
    port,
    user,
    password: decoded(url.password, 'password'),
    database,
    tls,
    label: `${rawHost}:${port}/${database}`,
    secrets: [connectionUrl, url.password, decoded(url.password, 'password')],
  };
}

interface Target {
  pool: pg.Pool;
  /** Tables known to exist, or being created, by quoted name. */
  tables: Map<string, Promise<void>>;
  /** Rows waiting for the next multi-row INSERT, by quoted table name. */
  batches: Map<string, PendingRow[]>;
}

interface PendingRow {
  row: DatabaseEventRow;
  resolve: (id: string) => void;
  reject: (error: unknown) => void;
}

interface TargetEntry {
  ready: Promise<Target>;
  lastUsed: number;
  /** Inserts under way: a busy pool is never swept. */
  busy: number;
}

/** SQLSTATEs of a table created at the same moment by another session (ours or not). */
const CREATED_CONCURRENTLY = new Set(['42P07', '23505']);
const UNDEFINED_TABLE = '42P01';

export class PostgresDatabaseTargets implements DatabaseTargets {
  readonly #options: PostgresDatabaseTargetsOptions;
  readonly #idlePoolMs: number;
  readonly #now: () => number;
  /** The pool of each connection URL. */
  readonly #targets = new Map<string, TargetEntry>();
  /** Pools replaced after a connection failure, ended once their last insert is over. */
  readonly #retiring = new Set<TargetEntry>();
  readonly #ending = new Set<Promise<void>>();
  readonly #sweep: NodeJS.Timeout;
  #closed = false;

  constructor(options: PostgresDatabaseTargetsOptions) {
    this.#options = options;
    this.#idlePoolMs = options.idlePoolMs ?? DEFAULT_IDLE_POOL_MS;
    this.#now = options.now ?? Date.now;
    const interval = options.sweepIntervalMs ?? Math.min(this.#idlePoolMs / 5, MAX_SWEEP_INTERVAL_MS);
    this.#sweep = setInterval(() => void this.closeIdlePools(), Math.max(interval, 1));
    // The sweep alone must not keep a process alive that has nothing else to do.
    this.#sweep.unref();
  }

  /** Pools currently open (for tests and metrics). */
  get openPools(): number {
    return this.#targets.size;
  }

  async insertEvent(connectionUrl: string, table: string, row: DatabaseEventRow): Promise<string> {
    // Both checked before anything else: a refused name or URL never reaches a connection.
    const quoted = quotedTableName(table);
    const address = parseConnectionUrl(connectionUrl);
    if (this.#closed) throw new DatabaseTargetError('The database targets are closed');
    const entry = this.#entry(connectionUrl, address);
    entry.busy += 1;
    entry.lastUsed = this.#now();
    try {
      return await this.#insert(await entry.ready, quoted, row);
    } catch (error) {
      if (connectionFailed(error)) this.#retire(connectionUrl, entry);
      throw new DatabaseTargetError(
        describeFailure(error, address.label, address.secrets, this.#options.timeoutMs),
      );
    } finally {
      entry.busy -= 1;
      entry.lastUsed = this.#now();
      if (entry.busy === 0 && this.#retiring.delete(entry)) this.#track(endPool(entry));
    }
  }

  /** Closes and drops the pools unused for `idlePoolMs`; resolves with how many were closed. */
  async closeIdlePools(): Promise<number> {
    const now = this.#now();
    const idle: TargetEntry[] = [];
    for (const [key, entry] of this.#targets) {
      if (entry.busy === 0 && now - entry.lastUsed >= this.#idlePoolMs) {
        this.#targets.delete(key);
        idle.push(entry);
      }
    }
    await Promise.all(idle.map(endPool));
    return idle.length;
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#sweep);
    const entries = [...this.#targets.values(), ...this.#retiring];
    this.#targets.clear();
    this.#retiring.clear();
    await Promise.all([...entries.map(endPool), ...this.#ending]);
  }

  /**
   * The next insert for this URL opens a new pool, resolving and checking the host again: after a
   * failover the name may point elsewhere, and the pool is tied to the address it was opened with.
   */
  #retire(connectionUrl: string, entry: TargetEntry): void {
    if (this.#targets.get(connectionUrl) !== entry) return;
    this.#targets.delete(connectionUrl);
    this.#retiring.add(entry);
  }

  #track(ending: Promise<void>): void {
    this.#ending.add(ending);
    void ending.finally(() => this.#ending.delete(ending));
  }

  #entry(connectionUrl: string, address: TargetAddress): TargetEntry {
    const existing = this.#targets.get(connectionUrl);
    if (existing !== undefined) return existing;
    const entry: TargetEntry = { ready: this.#open(address), lastUsed: this.#now(), busy: 0 };
    this.#targets.set(connectionUrl, entry);
    // A target that could not be opened (bad URL, refused host) is not kept: the next attempt
    // parses and resolves afresh.
    entry.ready.catch(() => {
      if (this.#targets.get(connectionUrl) === entry) this.#targets.delete(connectionUrl);
    });
    return entry;
  }

  async #open(address: TargetAddress): Promise<Target> {
    let connectTo = address.host;
    if (!this.#options.allowPrivateTargets) {
      const checked = await resolvePublicAddresses(
        address.host,
        this.#options.lookup,
        this.#options.classify ?? classifyAddress,
      );
      // pg takes one host: the resolver's first answer, every one of which passed the guard.
      connectTo = checked[0] ?? address.host;
    }
    const { timeoutMs } = this.#options;
    const pool = new pg.Pool({
      host: connectTo,
      port: address.port,
      user: address.user,
      database: address.database,
      // A function, so that an empty password stays empty: pg would replace '' (and undefined)
      // with PGPASSWORD or ~/.pgpass, i.e. our own credentials.
      password: () => address.password,
      ssl: tlsOptions(address, this.#options.ca),
      application_name: this.#options.applicationName ?? 'geofence-service workflows',
      max: MAX_CONNECTIONS_PER_TARGET,
      connectionTimeoutMillis: timeoutMs,
      statement_timeout: timeoutMs,
      query_timeout: timeoutMs + CLIENT_GRACE_MS,
      idleTimeoutMillis: IDLE_CONNECTION_MS,
      allowExitOnIdle: true,
    });
    // An idle connection the server drops is removed by the pool; unheard, the event would crash
    // the process. The next insert reports whatever is still wrong.
    pool.on('error', () => {});
    return { pool, tables: new Map(), batches: new Map() };
  }

  /**
   * Rows for one table of one target that arrive together (the actions of one claim round) are
   * written by one multi-row INSERT: one round trip and one commit for the lot, instead of one per
   * row through a pool of two connections. Each caller still gets its own row's id or error.
   */
  #insert(target: Target, quoted: string, row: DatabaseEventRow): Promise<string> {
    return new Promise<string>((resolve, reject) => {
      let batch = target.batches.get(quoted);
      if (batch === undefined) {
        batch = [];
        target.batches.set(quoted, batch);
        // After the current turn's microtasks: every action launched by this round has queued its row.
        setImmediate(() => void this.#flush(target, quoted));
      }
      batch.push({ row, resolve, reject });
    });
  }

  async #flush(target: Target, quoted: string): Promise<void> {
    const all = target.batches.get(quoted) ?? [];
    target.batches.delete(quoted);
    for (let i = 0; i < all.length; i += MAX_ROWS_PER_INSERT) {
      const part = all.slice(i, i + MAX_ROWS_PER_INSERT);
      try {
        const ids = await this.#insertRows(
          target,
          quoted,
          part.map((p) => p.row),
        );
        for (const [index, p] of part.entries()) p.resolve(ids[index] as string);
      } catch (error) {
        if (part.length === 1 || connectionFailed(error)) {
          for (const p of part) p.reject(error);
          continue;
        }
        // One row the table refuses (a constraint of the customer's) fails its own action only.
        for (const p of part) {
          try {
            const [id] = await this.#insertRows(target, quoted, [p.row]);
            p.resolve(id as string);
          } catch (alone) {
            p.reject(alone);
          }
        }
      }
    }
  }

  /** Inserts the rows in one statement; returns their ids in the rows' order. */
  async #insertRows(target: Target, quoted: string, rows: readonly DatabaseEventRow[]): Promise<string[]> {
    await this.#ensureTable(target, quoted);
    const values: unknown[] = [];
    const tuples = rows.map((row, i) => {
      values.push(row.eventId, row.eventType, row.payload, row.createdAt);
      const n = i * 4;
      return `($${n + 1}, $${n + 2}, $${n + 3}::jsonb, $${n + 4})`;
    });
    const insert = () =>
      target.pool.query<{ id: string }>(
        `insert into ${quoted} (event_id, event_type, payload, created_at) values ${tuples.join(', ')} returning id`,
        values,
      );
    let result: pg.QueryResult<{ id: string }>;
    try {
      result = await insert();
    } catch (error) {
      // The table was dropped since we created it: create it again, once.
      if (sqlState(error) !== UNDEFINED_TABLE) throw error;
      target.tables.delete(quoted);
      await this.#ensureTable(target, quoted);
      result = await insert();
    }
    // The executor inserts the VALUES rows in order and RETURNING yields them as inserted. Only
    // `id` is read back: a role granted INSERT and SELECT (id) alone is a supported setup.
    if (result.rows.length !== rows.length) throw new Error('the insert returned no row id');
    return result.rows.map((r) => String(r.id));
  }

  /** Creates the table once per target and name; concurrent first inserts share the work. */
  #ensureTable(target: Target, quoted: string): Promise<void> {
    const known = target.tables.get(quoted);
    if (known !== undefined) return known;
    const creating = createTableIfAbsent(target.pool, quoted);
    target.tables.set(quoted, creating);
    creating.catch(() => {
      if (target.tables.get(quoted) === creating) target.tables.delete(quoted);
    });
    return creating;
  }
}

async function createTableIfAbsent(pool: pg.Pool, quoted: string): Promise<void> {
  // Looked up first: CREATE TABLE IF NOT EXISTS needs the CREATE privilege on the schema even when
  // the table exists, and a role allowed only to insert into a table made beforehand is a fine setup.
  const found = await pool.query<{ present: boolean }>('select to_regclass($1) is not null as present', [
    quoted,
  ]);
  if (found.rows[0]?.present === true) return;
  try {
    await pool.query(
      `create table if not exists ${quoted} (id bigserial primary key, event_id text not null, event_type text not null, payload jsonb not null, created_at timestamptz not null)`,
    );
  } catch (error) {
    // Another session created it between our look-up and our CREATE: it exists, as wanted.
    const state = sqlState(error);
    if (state === undefined || !CREATED_CONCURRENTLY.has(state)) throw error;
  }
}

function tlsOptions(
  address: TargetAddress,
  ca: string | string[] | undefined,
): false | pg.ConnectionConfig['ssl'] {
  if (address.tls === 'off') return false;
  return {
    // The socket goes to the checked IP address; the certificate must still match the name.
    ...(isIP(address.host) === 0 ? { servername: address.host } : {}),
    ...(ca === undefined ? {} : { ca }),
    rejectUnauthorized: address.tls === 'verify',
  };
}

async function endPool(entry: TargetEntry): Promise<void> {
  let target: Target;
  try {
    target = await entry.ready;
  } catch {
    return; // never opened
  }
  await target.pool.end().catch(() => {});
}

interface ErrorLike {
  name?: unknown;
  code?: unknown;
  message?: unknown;
  cause?: unknown;
  severity?: unknown;
}

/**
 * Whether the pool's connection itself failed (network, timeout, TLS, a FATAL from the server, a
 * standby refusing writes), rather than one statement on a working connection.
 */
function connectionFailed(error: unknown): boolean {
  const state = sqlState(error);
  if (state === undefined) return true;
  const severity = (error as ErrorLike).severity;
  return severity !== 'ERROR' || state.startsWith('08') || state === '25006';
}

function sqlState(error: unknown): string | undefined {
  const e = error as ErrorLike | null;
  return typeof e?.code === 'string' && typeof e.severity === 'string' ? e.code : undefined;
}

const SYSTEM_ERRORS = new Map<string, string>(
  Object.entries({
    ECONNREFUSED: 'connection refused (is PostgreSQL listening on that host and port?)',
    ENOTFOUND: 'host not found (DNS lookup failed)',
    EAI_AGAIN: 'host not found (DNS lookup failed)',
    EHOSTUNREACH: 'host unreachable',
    ENETUNREACH: 'network unreachable',
    ETIMEDOUT: 'connection timed out',
    ECONNRESET: 'the server closed the connection',
    EPIPE: 'the server closed the connection',
  }),
);

const TLS_CERTIFICATE_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/**
 * The reason for a failure, named after the target (`db.example.com:5432/crm: …`): PostgreSQL's
 * own message with its SQLSTATE, or the connection problem in words. The guard's refusal and our
 * own configuration errors are passed on as written.
 */
function describeFailure(error: unknown, label: string, secrets: string[], timeoutMs: number): string {
  const e = (typeof error === 'object' && error !== null ? error : { message: String(error) }) as ErrorLike;
  const message = typeof e.message === 'string' ? e.message : String(error);
  if (e.name === 'ForbiddenTargetError' || error instanceof DatabaseTargetError) {
    return scrub(`${message}; nothing was sent`, secrets);
  }
  let reason: string;
  const code = typeof e.code === 'string' ? e.code : undefined;
  const state = sqlState(error);
  if (state === '28P01' || state === '28000') reason = `authentication failed: ${message}`;
  else if (state === '57014') reason = `statement timed out after ${timeoutMs} ms (${message})`;
  else if (state !== undefined) reason = `${message} (SQLSTATE ${state})`;
  else if (code !== undefined && SYSTEM_ERRORS.has(code)) reason = SYSTEM_ERRORS.get(code) ?? code;
  else if (code !== undefined && TLS_CERTIFICATE_CODES.has(code))
    reason = `TLS certificate not accepted: ${message}`;
  else if (/timeout exceeded when trying to connect|timeout expired|connection timeout/i.test(message))
    reason = `no connection within ${timeoutMs} ms`;
  else if (/Query read timeout/.test(message)) reason = `no answer within ${timeoutMs + CLIENT_GRACE_MS} ms`;
  else if (/client password must be/.test(message))
    reason = 'the server asks for a password and the connection URL has none';
  else if (/Connection terminated/.test(message)) reason = 'the server closed the connection';
  else reason = message;
  return scrub(`${label}: ${reason}`, secrets);
}

/**
 * No message may carry the password, whatever a driver or server put in it. A password of one or
 * two characters is not scrubbed: it would blank out letters all over the message.
 */
function scrub(message: string, secrets: readonly string[]): string {
  let text = message;
  for (const secret of secrets) if (secret.length >= 3) text = text.replaceAll(secret, '…');
  return text;
}
