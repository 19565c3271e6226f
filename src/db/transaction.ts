/**
 * Every write goes through here. The caller owns the transaction: routes and jobs open it and pass
 * `trx` down; storage functions accept `Db | Trx` (an `Executor`).
 */
import type { Kysely, Transaction } from 'kysely';
import type { Db } from './database.ts';
import type { DatabaseSchema } from './schema.ts';

export type Trx = Transaction<DatabaseSchema>;
export type Executor = Kysely<DatabaseSchema>;

export function withTransaction<T>(db: Db, work: (trx: Trx) => Promise<T>): Promise<T> {
  return db.transaction().execute(work);
}
