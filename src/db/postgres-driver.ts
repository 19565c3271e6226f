/**
 * Kysely's PostgreSQL driver over a pg pool in pipeline mode (pg's `pipeline: true`): a client
 * writes a statement without waiting for the answers to those before it, each with its parameters
 * bound (extended protocol). Each wait for an answer is a round trip, during which the
 * transaction's locks are held and, under load, the answer sits until Node gets to it. Two waits
 * of every transaction go (ADR 002):
 *
 * - **BEGIN travels with the transaction's first statement.** `beginTransaction` sends nothing;
 *   BEGIN is written right before the first statement and both answers are awaited together.
 * - **Writes whose results nobody reads travel with the COMMIT** when marked so (`sendWithCommit`:
 *   ingestion's writes, the dispatcher's last update): they are held, and written right before
 *   the COMMIT. Should another statement follow them after all, they are written right before it,
 *   in order, so it reads their rows.
 *
 * Statements written together are still separate statements: an error in one aborts the
 * transaction, the ones after it fail (a COMMIT then answers ROLLBACK), and the caller gets the
 * first error, in the order the statements were written. A transaction that ran no statement
 * sends nothing at all.
 */
import {
  type CompiledQuery,
  type DatabaseConnection,
  type Driver,
  PostgresDialect,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';
import type pg from 'pg';
import { asAvailabilityError } from './availability.ts';

const withCommit = new WeakSet<CompiledQuery>();

/**
 * Marks a write whose result nobody reads: inside a transaction on PostgreSQL it is held and sent
 * with the COMMIT (or before the next statement, should one follow). Other drivers run it at once.
 */
export function sendWithCommit<Q extends CompiledQuery>(query: Q): Q {
  withCommit.add(query);
  return query;
}

function toKyselyResult<R>(result: pg.QueryResult): QueryResult<R> {
  const { command, rowCount, rows } = result;
  const counted = command === 'INSERT' || command === 'UPDATE' || command === 'DELETE' || command === 'MERGE';
  return {
    ...(counted ? { numAffectedRows: BigInt(rowCount ?? 0) } : {}),
    rows: (rows ?? []) as R[],
  };
}

/**
 * Waits for every answer of statements written together, and returns the last one's, or throws
 * the first error in the order they were written: the later ones may only have failed because it
 * aborted the transaction.
 */
async function lastAnswer(answers: Array<Promise<pg.QueryResult>>): Promise<pg.QueryResult> {
  const settled = await Promise.allSettled(answers);
  for (const outcome of settled) if (outcome.status === 'rejected') throw outcome.reason;
  const last = settled.at(-1);
  if (last?.status !== 'fulfilled') throw new Error('no statement was sent');
  return last.value;
}

class PipelinedConnection implements DatabaseConnection {
  readonly client: pg.PoolClient;
  /**
   * The error that broke this connection (a reset socket, the server shutting down), if any. A
   * client checked out of a pg pool has no `error` listener of the pool's: without this one, an
   * error event while it is held (a database restart) would end the process.
   */
  #broken: Error | undefined;
  readonly #onError = (error: Error): void => {
    this.#broken ??= error;
  };
  /** The BEGIN of a transaction not yet sent: it goes out with the next statement. */
  #pendingBegin: string | undefined;
  /** Whether a transaction is open on the server (its BEGIN was sent). */
  #begun = false;
  /** Marked writes waiting for the COMMIT, in order. */
  #held: CompiledQuery[] = [];

  constructor(client: pg.PoolClient) {
    this.client = client;
    client.on('error', this.#onError);
  }

  /** Back to the pool, or destroyed by it when the connection broke while held. */
  release(): void {
    this.client.removeListener('error', this.#onError);
    this.client.release(this.#broken);
  }

  begin(statement: string): void {
    this.#pendingBegin = statement;
    this.#begun = false;
    this.#held = [];
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (this.#inTransaction() && withCommit.has(query)) {
      this.#held.push(query);
      return { rows: [] };
    }
    const answers = this.#writeOwed();
    answers.push(this.#write(query.sql, query.parameters));
    try {
      return toKyselyResult<R>(await lastAnswer(answers));
    } catch (error) {
      throw asAvailabilityError(error);
    }
  }

  // biome-ignore lint/correctness/useYield: streaming is not configured, as with Kysely's own driver without `cursor`.
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming is not supported by this PostgreSQL driver');
  }

  /** Sends what the transaction still owes and COMMIT; nothing at all when it ran no statement. */
  async commit(): Promise<void> {
    if (!this.#begun && this.#held.length === 0) {
      this.#pendingBegin = undefined;
      return;
    }
    const answers = this.#writeOwed();
    answers.push(this.#write('commit'));
    // Whatever the answer, the transaction is over: a failed COMMIT rolls back.
    this.#begun = false;
    try {
      await lastAnswer(answers);
    } catch (error) {
      throw asAvailabilityError(error);
    }
  }

  /** Rolls back on the server if the transaction reached it; held writes are simply dropped. */
  async rollback(): Promise<void> {
    const begun = this.#begun;
    this.#pendingBegin = undefined;
    this.#begun = false;
    this.#held = [];
    // A connection that broke has no transaction left on the server to roll back; the error that
    // broke it is the one the caller sees, not this statement's.
    if (!begun || this.#broken !== undefined) return;
    try {
      await this.client.query('rollback');
    } catch (error) {
      // The server ends the transaction with the session; the pool must not reuse this client.
      this.#broken ??= error instanceof Error ? error : new Error(String(error));
    }
  }

  #inTransaction(): boolean {
    return this.#begun || this.#pendingBegin !== undefined;
  }

  /** Writes the pending BEGIN and the held writes, in order, without waiting for their answers. */
  #writeOwed(): Array<Promise<pg.QueryResult>> {
    const answers: Array<Promise<pg.QueryResult>> = [];
    if (this.#pendingBegin !== undefined) {
      answers.push(this.#write(this.#pendingBegin));
      this.#pendingBegin = undefined;
      this.#begun = true;
    }
    for (const held of this.#held) answers.push(this.#write(held.sql, held.parameters));
    this.#held = [];
    return answers;
  }

  #write(text: string, parameters: readonly unknown[] = []): Promise<pg.QueryResult> {
    // pg reads the values and keeps no reference to the array.
    return this.client.query(text, parameters as unknown[]);
  }
}

/** Kysely hands the driver only the connections it acquired from it. */
function own(connection: DatabaseConnection): PipelinedConnection {
  if (!(connection instanceof PipelinedConnection)) throw new Error('not a connection of this driver');
  return connection;
}

/** `begin`, or `start transaction <modes>` (Kysely's own isolation levels and access modes). */
function beginStatement(settings: TransactionSettings): string {
  const modes = [
    ...(settings.isolationLevel ? [`isolation level ${settings.isolationLevel}`] : []),
    ...(settings.accessMode ? [settings.accessMode] : []),
  ];
  return modes.length === 0 ? 'begin' : `start transaction ${modes.join(', ')}`;
}

class PipelinedPostgresDriver implements Driver {
  readonly #pool: pg.Pool;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    let client: pg.PoolClient;
    try {
      client = await this.#pool.connect();
    } catch (error) {
      throw asAvailabilityError(error);
    }
    return new PipelinedConnection(client);
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    own(connection).begin(beginStatement(settings));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await own(connection).commit();
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await own(connection).rollback();
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    own(connection).release();
  }

  async destroy(): Promise<void> {
    await this.#pool.end();
  }
}

/** PostgreSQL through a pool whose clients pipeline (`pipeline: true`, see database.ts). */
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
