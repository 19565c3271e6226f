/**
 * Kysely over Node's built-in `node:sqlite` (no native add-on to download). Kysely's SqliteDialect
 * expects a better-sqlite3-shaped database; this adapter provides one, caches prepared statements
 * (preparing is the dominant cost of small queries), converts JS values SQLite cannot bind, and
 * opens write transactions with BEGIN IMMEDIATE so that two processes sharing a file wait on the
 * busy timeout instead of failing with SQLITE_BUSY when a reader upgrades to a writer.
 */
import { DatabaseSync, type SQLInputValue, type StatementSync } from 'node:sqlite';
import {
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  type SqliteDatabase,
  SqliteDialect,
  SqliteDriver,
  type SqliteStatement,
} from 'kysely';

const STATEMENT_CACHE_SIZE = 500;

export function toSqliteValue(value: unknown): SQLInputValue {
  // The common cases first: bulk inserts bind tens of thousands of values per statement.
  if (typeof value === 'string' || typeof value === 'number') return value;
  if (value === undefined || value === null) return null;
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'bigint') return value;
  if (value instanceof Uint8Array) return value;
  // Objects reach here only by mistake: JSON columns are serialised by the storage modules.
  return JSON.stringify(value);
}

/**
 * The parameters as SQLite binds them. Many-row statements bind tens of thousands of values that
 * are already strings, numbers or null (src/db/row-encoding.ts converts while flattening): checking
 * is cheaper than mapping, so the array is copied only when some value needs converting.
 */
function bindable(parameters: ReadonlyArray<unknown>): SQLInputValue[] {
  for (let i = 0; i < parameters.length; i++) {
    const value = parameters[i];
    if (value !== null && typeof value !== 'string' && typeof value !== 'number') {
      return parameters.map(toSqliteValue);
    }
  }
  return parameters as SQLInputValue[];
}

class NodeSqliteStatement implements SqliteStatement {
  readonly reader: boolean;
  private readonly statement: StatementSync;
  constructor(statement: StatementSync) {
    this.statement = statement;
    this.reader = statement.columns().length > 0;
  }
  all(parameters: ReadonlyArray<unknown>): unknown[] {
    return this.statement.all(...bindable(parameters));
  }
  run(parameters: ReadonlyArray<unknown>): { changes: number | bigint; lastInsertRowid: number | bigint } {
    return this.statement.run(...bindable(parameters));
  }
  iterate(parameters: ReadonlyArray<unknown>): IterableIterator<unknown> {
    return this.statement.iterate(...bindable(parameters));
  }
}

export class NodeSqliteDatabase implements SqliteDatabase {
  readonly raw: DatabaseSync;
  private readonly statements = new Map<string, NodeSqliteStatement>();
  constructor(path: string) {
    this.raw = new DatabaseSync(path);
    if (path !== ':memory:') this.raw.exec('PRAGMA journal_mode = WAL');
    this.raw.exec('PRAGMA busy_timeout = 5000');
    this.raw.exec('PRAGMA foreign_keys = ON');
    this.raw.exec('PRAGMA synchronous = NORMAL');
    // Location ingestion rewrites pages all over the devices table and the locations indexes:
    // a 64 MiB page cache (default 2 MiB) keeps them in memory, and checkpointing every ~40 MiB of
    // WAL (default ~4 MiB, i.e. after nearly every 1,000-location batch) lets a page rewritten by
    // many commits be copied back once (measured: median batch 40 → 29 ms). With a file database the
    // copying itself is done beforehand by the checkpoint thread (wal-checkpointer.ts); this automatic
    // checkpoint then finds little left and lets the WAL start over from its beginning.
    this.raw.exec('PRAGMA cache_size = -65536');
    this.raw.exec('PRAGMA wal_autocheckpoint = 10000');
    // A statement that may fail half-way inside a transaction (every multi-row INSERT here) keeps
    // the pages it changes in a statement journal, to undo just itself. By default that journal
    // spills to a temporary file past 64 KiB, written page by page for every page a group of ~40
    // locations touches: in memory it is a copy (ADR 008, "Storage settings"). Sorts and other
    // temporary b-trees (index builds in migrations, large ORDER BY) use memory too.
    this.raw.exec('PRAGMA temp_store = MEMORY');
  }
  prepare(sql: string): SqliteStatement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = new NodeSqliteStatement(this.raw.prepare(sql));
      if (this.statements.size >= STATEMENT_CACHE_SIZE) {
        const oldest = this.statements.keys().next().value;
        if (oldest !== undefined) this.statements.delete(oldest);
      }
      this.statements.set(sql, statement);
    }
    return statement;
  }
  close(): void {
    this.statements.clear();
    if (this.raw.isOpen) this.raw.close();
  }
}

class ImmediateTransactionSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

export class NodeSqliteDialect extends SqliteDialect {
  private readonly database: NodeSqliteDatabase;
  constructor(database: NodeSqliteDatabase) {
    super({ database });
    this.database = database;
  }
  override createDriver(): Driver {
    return new ImmediateTransactionSqliteDriver({ database: this.database });
  }
}
