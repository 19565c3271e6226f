/**
 * Opens the configured database (contract §0 `DATABASE_URL`): SQLite through `node:sqlite`, or
 * PostgreSQL through a `pg` pool. Everything above this module sees one Kysely instance and a
 * capabilities object; dialect differences are data here, not `if`s scattered through services.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Kysely, sql } from 'kysely';
import pg from 'pg';
import type { Logger } from 'pino';
import type { DatabaseTarget } from '../config.ts';
import { PipelinedPostgresDialect } from './postgres-driver.ts';
import type { DatabaseSchema } from './schema.ts';
import { NodeSqliteDatabase, NodeSqliteDialect } from './sqlite-driver.ts';
import { type ColumnTypes, postgresForms, SQLITE_FORMS, type StatementForms } from './statement-forms.ts';
import { WalCheckpointer } from './wal-checkpointer.ts';

export type Dialect = 'sqlite' | 'postgres';

/**
 * The longest a statement waits for a PostgreSQL connection. Beyond it the request answers 503
 * (availability.ts): well within the contract's 2 s, and far beyond any wait of a healthy pool.
 */
const CONNECTION_WAIT_MS = 1_500;

/**
 * What differs between the dialects, as data (pg-boss's backend profiles): code above this module
 * reads these fields and never branches on the dialect's name.
 */
export interface DialectCapabilities {
  dialect: Dialect;
  /** `FOR UPDATE SKIP LOCKED` claims for multi-worker queues. */
  skipLocked: boolean;
  /** Row locks (`FOR UPDATE`); SQLite serialises writers instead. */
  rowLocks: boolean;
  /**
   * Transaction-scoped advisory locks (`pg_advisory_xact_lock`), which serialise a check-then-insert
   * such as a count limit (ADR 011). SQLite needs none: its write transactions begin IMMEDIATE and
   * hold the database's one write lock from their first statement (sqlite-driver.ts).
   */
  advisoryLocks: boolean;
  /** Column types used by migrations and by the casts of many-row statements. */
  types: ColumnTypes;
  /** Placeholders, many-row sources and value lists as this dialect writes them (statement-forms.ts). */
  statements: StatementForms;
}

const POSTGRES_TYPES: ColumnTypes = {
  timestamp: 'timestamptz',
  json: 'jsonb',
  boolean: 'boolean',
  double: 'double precision',
};

const CAPABILITIES: Record<Dialect, DialectCapabilities> = {
  sqlite: {
    dialect: 'sqlite',
    skipLocked: false,
    rowLocks: false,
    advisoryLocks: false,
    types: { timestamp: 'text', json: 'text', boolean: 'integer', double: 'real' },
    statements: SQLITE_FORMS,
  },
  postgres: {
    dialect: 'postgres',
    skipLocked: true,
    rowLocks: true,
    advisoryLocks: true,
    types: POSTGRES_TYPES,
    statements: postgresForms(POSTGRES_TYPES),
  },
};

export type Db = Kysely<DatabaseSchema>;

export interface DatabaseHandle {
  db: Db;
  capabilities: DialectCapabilities;
  /** PostgreSQL schema holding our tables (search_path); undefined on SQLite. */
  schema: string | undefined;
  /** Answers whether the database can run a query now (readiness probe). */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

// int8 (count(*), bigint columns) as JS numbers: every such value here is far below 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number.parseInt(value, 10));
pg.types.setTypeParser(pg.types.builtins.NUMERIC, (value) => Number.parseFloat(value));

export interface OpenDatabaseOptions {
  /** PostgreSQL only: the schema to use (search_path); tests give each run its own. */
  schema?: string;
  poolSize?: number;
  /** SQLite files: how often the checkpoint thread copies the WAL back (0: SQLite's own only). */
  walCheckpointIntervalMs?: number;
  /** Where the checkpoint thread reports failures. */
  logger?: Logger;
}

export function openDatabase(target: DatabaseTarget, options: OpenDatabaseOptions = {}): DatabaseHandle {
  if (target.kind === 'sqlite') {
    if (target.path !== ':memory:') fs.mkdirSync(path.dirname(target.path), { recursive: true });
    const database = new NodeSqliteDatabase(target.path);
    const db = new Kysely<DatabaseSchema>({ dialect: new NodeSqliteDialect(database) });
    const interval = options.walCheckpointIntervalMs ?? 0;
    const checkpointer =
      target.path !== ':memory:' && interval > 0
        ? new WalCheckpointer({
            path: target.path,
            intervalMs: interval,
            ...(options.logger ? { logger: options.logger } : {}),
          })
        : undefined;
    return {
      db,
      capabilities: CAPABILITIES.sqlite,
      schema: undefined,
      ping: () => pingWith(db),
      close: async () => {
        await checkpointer?.close();
        await db.destroy();
      },
    };
  }
  const pool = new pg.Pool({
    connectionString: target.url,
    max: options.poolSize ?? 10,
    // Statements are sent without waiting for the answers to earlier ones (postgres-driver.ts).
    pipeline: true,
    // Contract §0: with the database unreachable a request answers 503 within 2 s, never hangs.
    // This bounds the wait for a connection (a free one of the pool, or a new one being made).
    connectionTimeoutMillis: CONNECTION_WAIT_MS,
    // A peer that vanished without a reset (a failover, a cut network) is noticed by the kernel.
    keepAlive: true,
    ...(options.schema ? { options: `-c search_path=${quoteIdent(options.schema)}` } : {}),
  });
  // An idle client losing its connection must not crash the process; the pool replaces it on the
  // next checkout (held clients have a listener of the driver's, postgres-driver.ts).
  pool.on('error', (error) => options.logger?.warn({ err: error.message }, 'database connection lost'));
  const db = new Kysely<DatabaseSchema>({ dialect: new PipelinedPostgresDialect(pool) });
  return {
    db,
    capabilities: CAPABILITIES.postgres,
    schema: options.schema ?? 'public',
    ping: () => pingWith(db),
    close: () => db.destroy(),
  };
}

async function pingWith(db: Db): Promise<boolean> {
  try {
    await sql`select 1`.execute(db);
    return true;
  } catch {
    return false;
  }
}

function quoteIdent(name: string): string {
  if (!/^[a-z_][a-z0-9_]*$/i.test(name)) throw new Error(`Unsafe schema name: ${name}`);
  return name;
}
