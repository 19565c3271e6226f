/**
 * Each test app gets a database of its own: a fresh in-memory SQLite, or a fresh PostgreSQL schema
 * (dropped afterwards) when TEST_DATABASE_URL points at PostgreSQL. `npm test` runs on whichever
 * TEST_DATABASE_URL names (default SQLite); CI runs it once for each.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';

export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? 'sqlite::memory:';
export const IS_POSTGRES = /^postgres(ql)?:\/\//.test(TEST_DATABASE_URL);

export interface TestDatabase {
  url: string;
  schema: string | undefined;
  drop(): Promise<void>;
}

export async function createTestDatabase(): Promise<TestDatabase> {
  if (!IS_POSTGRES) return { url: TEST_DATABASE_URL, schema: undefined, drop: async () => {} };
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    await client.query(`create schema ${schema}`);
  } finally {
    await client.end();
  }
  return {
    url: TEST_DATABASE_URL,
    schema,
    drop: async () => {
      const dropper = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await dropper.connect();
      try {
        await dropper.query(`drop schema if exists ${schema} cascade`);
      } finally {
        await dropper.end();
      }
    },
  };
}

/**
 * A database that several apps can open at once, like nodes of one deployment: a PostgreSQL schema
 * as above, or on SQLite a temporary file (an in-memory database lives inside one connection).
 */
export async function createSharedTestDatabase(): Promise<TestDatabase> {
  if (IS_POSTGRES) return createTestDatabase();
  const file = path.join(os.tmpdir(), `geofence-test-${randomBytes(6).toString('hex')}.db`);
  return {
    url: `sqlite:${file}`,
    schema: undefined,
    drop: async () => {
      for (const suffix of ['', '-wal', '-shm']) fs.rmSync(`${file}${suffix}`, { force: true });
    },
  };
}
