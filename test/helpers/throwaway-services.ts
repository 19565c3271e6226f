/**
 * A PostgreSQL server and a Redis server of a test's own, on free ports, that it may stop and
 * start at will (fault tests): the shared PostgreSQL on 5432 and Redis on 6379 are never touched.
 * PostgreSQL comes from the machine's binaries (initdb + pg_ctl; as root they run as the
 * `postgres` user, which initdb requires), its data in a temporary folder removed at the end.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from './spawned-server.ts';

const run = promisify(execFile);

/** The newest PostgreSQL whose binaries are installed (Debian keeps them per major version). */
function postgresBin(): string {
  const root = '/usr/lib/postgresql';
  const versions = fs.existsSync(root) ? fs.readdirSync(root).sort((a, b) => Number(b) - Number(a)) : [];
  for (const version of versions) {
    const bin = path.join(root, version, 'bin');
    if (fs.existsSync(path.join(bin, 'pg_ctl'))) return bin;
  }
  throw new Error('no PostgreSQL binaries under /usr/lib/postgresql');
}

const AS_ROOT = process.getuid?.() === 0;

/** Runs a PostgreSQL binary, as `postgres` when this process is root (initdb refuses root). */
async function pgCommand(bin: string, args: string[]): Promise<void> {
  const [file, argv] = AS_ROOT ? ['runuser', ['-u', 'postgres', '--', bin, ...args]] : [bin, args];
  await run(file, argv, { timeout: 60_000 });
}

export interface ThrowawayPostgres {
  url: string;
  port: number;
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  start(): Promise<void>;
  restart(): Promise<void>;
  /** Stops the server and removes its files. */
  destroy(): Promise<void>;
}

export async function startThrowawayPostgres(): Promise<ThrowawayPostgres> {
  const bin = postgresBin();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'geofence-pg-'));
  if (AS_ROOT) await run('chown', ['postgres', dir]);
  const data = path.join(dir, 'data');
  const port = await freePort();
  await pgCommand(path.join(bin, 'initdb'), [
    '-D',
    data,
    '-U',
    'postgres',
    '--auth=trust',
    '--no-sync',
    '-E',
    'UTF8',
  ]);
  // Durability is not under test: fsync off keeps the server fast on a busy machine.
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100`;
  const ctl = (...args: string[]) =>
    pgCommand(path.join(bin, 'pg_ctl'), [
      '-D',
      data,
      '-l',
      path.join(dir, 'log'),
      '-w',
      '-o',
      options,
      ...args,
    ]);
  let running = false;
  const server: ThrowawayPostgres = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    stop: async (mode = 'fast') => {
      await ctl('-m', mode, 'stop');
      running = false;
    },
    start: async () => {
      await ctl('start');
      running = true;
    },
    restart: async () => {
      await ctl('-m', 'fast', 'restart');
      running = true;
    },
    destroy: async () => {
      if (running) await server.stop('immediate').catch(() => undefined);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  await server.start();
  return server;
}

/** A database of its own on a throwaway server (a server process takes its schema from the URL). */
export async function createDatabaseOn(server: ThrowawayPostgres, name: string): Promise<string> {
  const client = new pg.Client({ connectionString: server.url });
  await client.connect();
  try {
    await client.query(`create database ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(server.url);
  url.pathname = `/${name}`;
  return url.toString();
}

export interface ThrowawayRedis {
  url: string;
  stop(): Promise<void>;
  start(): Promise<void>;
  destroy(): Promise<void>;
}

/**
 * A Redis server that daemonizes (its pid in a file of its own): a test may stop and start it
 * without leaving a child process of its own running between tests.
 */
export async function startThrowawayRedis(): Promise<ThrowawayRedis> {
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'geofence-redis-'));
  const pidFile = path.join(dir, 'redis.pid');
  const start = async (): Promise<void> => {
    await run('redis-server', [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--daemonize',
      'yes',
      '--pidfile',
      pidFile,
      '--dir',
      dir,
      '--logfile',
      path.join(dir, 'log'),
    ]);
    await until(() => answers(port), 'redis-server to accept connections');
  };
  const stop = async (): Promise<void> => {
    const pid = fs.existsSync(pidFile) ? Number(fs.readFileSync(pidFile, 'utf8').trim()) : undefined;
    if (pid === undefined || !Number.isInteger(pid)) return;
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      return; // already gone
    }
    fs.rmSync(pidFile, { force: true });
    await until(async () => !(await answers(port)), 'redis-server to stop');
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    start,
    stop,
    destroy: async () => {
      await stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Whether something accepts connections on the port. */
function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
