/**
 * The databases an end-to-end benchmark runs on: a SQLite file in the run's folder, or a fresh
 * database on the local PostgreSQL server, dropped afterwards. `tag` tells apart the databases of
 * one run.
 */
import path from 'node:path';
import { createBenchDatabase, dropBenchDatabase } from './postgres.ts';

export interface BenchTarget {
  name: 'sqlite' | 'postgres';
  url(dir: string, tag: string): string;
  cleanup(tag: string): void;
}

export function benchTargets(bench: string, postgres: boolean): BenchTarget[] {
  const sqlite: BenchTarget = {
    name: 'sqlite',
    url: (dir, tag) => `sqlite:${path.join(dir, `${tag}.db`)}`,
    cleanup: () => {},
  };
  const database = (tag: string) => `bench_${bench}_${tag}_${process.pid}`;
  const pg: BenchTarget = {
    name: 'postgres',
    url: (_dir, tag) => createBenchDatabase(database(tag)),
    cleanup: (tag) => dropBenchDatabase(database(tag)),
  };
  return postgres ? [sqlite, pg] : [sqlite];
}
