/**
 * Kysely's PostgreSQL driver with fewer round trips (ADR 008, session 5). Each statement is a round
 * trip: a write to the server, a wake-up of its backend, and a wait for the answer during which the
 * transaction's locks are held. Under load the wait is mostly the event loop's: the answer sits
 * until Node gets to it. Ingesting one group of single locations took five of them (BEGIN, the
 * device lock, the geofence read, the combined writes, COMMIT). Two go:
 *
 * - **BEGIN travels with the transaction's first statement.** `beginTransaction` sends nothing;
 *   the first statement goes out as `begin; <statement>` in one simple-protocol message.
 * - **A write whose result nobody reads travels with the COMMIT** when it is marked so
 *   (`sendWithCommit`, used for ingestion's combined writes): `<write>; commit`.
 *
 * The simple protocol carries no parameters, so those two statements have their parameters
 * written into the text by `inlineParameters`: each value as pg itself would send it, quoted as an
 * escape-string literal of unknown type, which PostgreSQL resolves from the context as it does a
 * parameter. A statement that cannot be inlined is sent as before, after its own BEGIN. An error
 * in a combined message aborts the rest of it, COMMIT included, and the caller rolls back as usual.
 * A transaction that ran no statement sends nothing at all.
 */
import { createRequire } from 'node:module';
import {
  type CompiledQuery,
  type DatabaseConnection,
  type Driver,
  PostgresDialect,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';
import type pg from 'pg';

// pg's own conversion of a parameter to its text form (Dates, arrays, JSON, booleans).
const { prepareValue } = createRequire(import.meta.url)('pg/lib/utils') as {
  prepareValue(value: unknown): unknown;
};

const withCommit = new WeakSet<CompiledQuery>();

/**
 * Marks a write whose result nobody reads: inside a transaction it is held and sent with the
 * COMMIT (or before the next statement, should one follow).
 */
export function sendWithCommit<Q extends CompiledQuery>(query: Q): Q {
  withCommit.add(query);
  return query;
}

/** An escape-string literal: backslashes and quotes escaped, whatever `standard_conforming_strings` says. */
function quoteLiteral(text: string): string {
  return `E'${text.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`;
}

/**
 * The statement with its `$n` parameters written in as literals, or undefined when that is not
 * safe: text with string literals or dollar quoting of its own (a `$n` there might not be a
 * parameter), or a value pg would not send as text (binary data). Our identifiers hold no `$`.
 */
export function inlineParameters(sql: string, parameters: readonly unknown[]): string | undefined {
  if (parameters.length === 0) return sql;
  if (sql.includes("'") || sql.includes('$$')) return undefined;
  let inlinable = true;
  const text = sql.replace(/\$(\d+)/g, (placeholder, n: string) => {
    const index = Number(n) - 1;
    if (index >= parameters.length) {
      inlinable = false;
      return placeholder;
    }
    const value = prepareValue(parameters[index]);
    if (value === null || value === undefined) return 'NULL';
    // A NUL cannot be in a simple-protocol message (it ends the text): left to the server's own
    // error for a parameter.
    if (typeof value !== 'string' || value.includes('\u0000')) {
      inlinable = false;
      return placeholder;
    }
    return quoteLiteral(value);
  });
  return inlinable ? text : undefined;
}

function toKyselyResult<R>(result: pg.QueryResult): QueryResult<R> {
  const { command, rowCount, rows } = result;
  const counted = command === 'INSERT' || command === 'UPDATE' || command === 'DELETE' || command === 'MERGE';
  return {
    ...(counted ? { numAffectedRows: BigInt(rowCount ?? 0) } : {}),
    rows: (rows ?? []) as R[],
  };
}

/** The answer to a multi-statement message is one result per statement; `index` picks one. */
function resultAt(answer: pg.QueryResult | pg.QueryResult[], index: number): pg.QueryResult {
  if (!Array.isArray(answer)) return answer;
  const result = answer[index];
  if (!result) throw new Error(`expected ${index + 1} results, got ${answer.length}`);
  return result;
}

class PipelinedConnection implements DatabaseConnection {
  readonly client: pg.PoolClient;
  /** A transaction was begun and nothing sent yet: the next statement carries its BEGIN. */
  beginPending = false;
  inTransaction = false;
  /** The marked write waiting for the COMMIT, inlined. */
  withCommit: string | undefined;

  constructor(client: pg.PoolClient) {
    this.client = client;
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    // A held write goes first when another statement follows it after all: that one may read it.
    const held = this.withCommit;
    if (held !== undefined) {
      this.withCommit = undefined;
      await this.client.query(this.beginPending ? `begin; ${held}` : held);
      this.beginPending = false;
    }
    if (this.inTransaction && withCommit.has(query)) {
      const inlined = inlineParameters(query.sql, query.parameters);
      if (inlined !== undefined) {
        this.withCommit = inlined;
        return { rows: [] };
      }
    }
    if (this.beginPending) {
      this.beginPending = false;
      const inlined = inlineParameters(query.sql, query.parameters);
      if (inlined !== undefined) {
        return toKyselyResult<R>(resultAt(await this.client.query(`begin; ${inlined}`), 1));
      }
      await this.client.query('begin');
    }
    return toKyselyResult<R>(await this.client.query(query.sql, [...query.parameters]));
  }

  // biome-ignore lint/correctness/useYield: streaming is not configured, as with Kysely's own driver without `cursor`.
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming is not supported by this PostgreSQL driver');
  }

  /** Sends whatever the transaction still owes, then `last`; returns without a round trip when nothing is owed. */
  async finish(last: 'commit' | 'rollback'): Promise<void> {
    const begun = !this.beginPending;
    const pending = this.withCommit;
    this.beginPending = false;
    this.inTransaction = false;
    this.withCommit = undefined;
    if (last === 'rollback') {
      // Nothing reached the server if BEGIN never did; a held write is simply dropped.
      if (begun) await this.client.query('rollback');
      return;
    }
    // A transaction that never sent a statement has nothing to commit.
    if (!begun && pending === undefined) return;
    const parts = [...(begun ? [] : ['begin']), ...(pending === undefined ? [] : [pending]), 'commit'];
    await this.client.query(parts.join('; '));
  }
}

/** Kysely hands the driver only the connections it acquired from it. */
function own(connection: DatabaseConnection): PipelinedConnection {
  if (!(connection instanceof PipelinedConnection)) throw new Error('not a connection of this driver');
  return connection;
}

class PipelinedPostgresDriver implements Driver {
  readonly #pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    return new PipelinedConnection(await this.#pool.connect());
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const pipelined = own(connection);
    pipelined.inTransaction = true;
    if (settings.isolationLevel || settings.accessMode) {
      // Not used by this service; sent as its own statement like Kysely does.
      const modes = [
        ...(settings.isolationLevel ? [`isolation level ${settings.isolationLevel}`] : []),
        ...(settings.accessMode ? [settings.accessMode] : []),
      ];
      await pipelined.client.query(`start transaction ${modes.join(', ')}`);
      return;
    }
    pipelined.beginPending = true;
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await own(connection).finish('commit');
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await own(connection).finish('rollback');
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    own(connection).client.release();
  }

  async destroy(): Promise<void> {
    await this.#pool.end();
  }
}

export class PipelinedPostgresDialect extends PostgresDialect {
  readonly #pool: pg.Pool;

  constructor(pool: pg.Pool) {
    super({ pool });
    this.#pool = pool;
  }

  override createDriver(): Driver {
    return new PipelinedPostgresDriver(this.#pool);
  }
}
