/**
 * The write statements of one ingestion transaction as ONE statement on PostgreSQL (ADR 008,
 * "Combined writes"). Each statement is a round trip to the server — a socket write, a wake-up of
 * the backend and a wait for its answer — and a transaction wrote locations, events, outbox rows,
 * session summaries, device states and the usage counter in up to six of them. Collected here
 * instead of executed, they are sent together as the branches of a data-modifying `WITH`, their
 * `$n` parameters renumbered: one round trip, the same rows, and still all-or-nothing (a failure
 * in any branch fails the statement, and the transaction with it).
 *
 * Only statements whose results nobody reads may be collected: the storage functions of the
 * ingestion writes (`bulk.ts` builders, the usage upsert) run unchanged against it.
 */
import { CompiledQuery, type QueryResult } from 'kysely';
import type { StatementRunner } from './bulk.ts';
import { sendWithCommit } from './postgres-driver.ts';

export class CombinedWrites implements StatementRunner {
  readonly #queries: CompiledQuery[] = [];

  async executeQuery<R>(query: CompiledQuery<R>): Promise<QueryResult<R>> {
    this.#queries.push(query);
    return { rows: [] };
  }

  /** The collected statements as one (undefined when none). */
  combined(): CompiledQuery | undefined {
    if (this.#queries.length <= 1) return this.#queries[0];
    const parameters: unknown[] = [];
    const branches = this.#queries.map((query, i) => {
      const offset = parameters.length;
      parameters.push(...query.parameters);
      // Our statements carry no `$` outside parameter placeholders (data travels as parameters).
      const text = query.sql.replace(/\$(\d+)/g, (_m, n: string) => `$${Number(n) + offset}`);
      return `w${i + 1} as (${text})`;
    });
    return CompiledQuery.raw(`with ${branches.join(', ')} select 1`, parameters);
  }

  /**
   * Runs the collected statements on `db` in one round trip, which the PostgreSQL driver shares
   * with the COMMIT when nothing else follows in the transaction (postgres-driver.ts).
   */
  async flush(db: StatementRunner): Promise<void> {
    const query = this.combined();
    if (query) await db.executeQuery(sendWithCommit(query));
  }
}
