/**
 * A runner for a transaction's last writes, whose results nobody reads (ingestion's locations,
 * events, outbox rows, session summaries, device states and usage counter): each is marked
 * `sendWithCommit`, so on PostgreSQL they are written together with the COMMIT and the
 * transaction waits once for all of them instead of once per statement (postgres-driver.ts).
 * SQLite runs each at once, in process. Every write is still its own statement with bound
 * parameters, and all of them commit or none.
 */
import type { CompiledQuery, QueryResult } from 'kysely';
import { sendWithCommit } from './postgres-driver.ts';
import type { StatementRunner } from './statements.ts';

export function writesWithCommit(trx: StatementRunner): StatementRunner {
  return {
    executeQuery: <R>(query: CompiledQuery<R>): Promise<QueryResult<R>> =>
      trx.executeQuery(sendWithCommit(query)),
  };
}
