/**
 * Throwaway PostgreSQL databases for the benchmarks, on the machine's local server (trust auth,
 * maintenance database `test`), through `psql`.
 */
import { execFileSync } from 'node:child_process';

function psql(statement: string): void {
  execFileSync('psql', ['-h', '127.0.0.1', '-U', 'postgres', '-d', 'test', '-qc', statement]);
}

/** Creates database `name` and returns its URL. */
export function createBenchDatabase(name: string): string {
  psql(`create database ${name}`);
  return `postgres://postgres@127.0.0.1:5432/${name}`;
}

/** Drops database `name`, ending any connection still open to it. */
export function dropBenchDatabase(name: string): void {
  psql(`drop database if exists ${name} with (force)`);
}

/** Bytes on disk of database `name`'s tables and indexes (`pg_database_size`). */
export function databaseSizeBytes(name: string): number {
  const out = execFileSync('psql', [
    '-h',
    '127.0.0.1',
    '-U',
    'postgres',
    '-d',
    'test',
    '-tAc',
    `select pg_database_size('${name}')`,
  ]);
  return Number(out.toString().trim());
}

/** Rows of `table` in database `name` (a bench's own tables only: the names are never a request's). */
export function countRows(name: string, table: string): number {
  const out = execFileSync('psql', [
    '-h',
    '127.0.0.1',
    '-U',
    'postgres',
    '-d',
    name,
    '-tAc',
    `select count(*) from ${table}`,
  ]);
  return Number(out.toString().trim());
}
