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

/**
 * The one value `statement` answers in database `database`. `vars` become psql variables, which
 * the statement names as `:'name'` (a literal) or `:"name"` (an identifier), so no value is pasted
 * into its text; psql substitutes them only in a script it reads, hence stdin.
 */
function psqlValue(database: string, statement: string, vars: Record<string, string>): string {
  const args = ['-h', '127.0.0.1', '-U', 'postgres', '-d', database, '-tA', '-v', 'ON_ERROR_STOP=1'];
  for (const [key, value] of Object.entries(vars)) args.push('-v', `${key}=${value}`);
  return execFileSync('psql', args, { input: `${statement};\n` })
    .toString()
    .trim();
}

/** Bytes on disk of database `name`'s tables and indexes (`pg_database_size`). */
export function databaseSizeBytes(name: string): number {
  return Number(psqlValue('test', `select pg_database_size(:'name')`, { name }));
}

/** Rows of `table` in database `name` (a bench's own tables). */
export function countRows(name: string, table: string): number {
  return Number(psqlValue(name, `select count(*) from :"table"`, { table }));
}
