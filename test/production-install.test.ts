/**
 * Contract §0, production install: `npm ci --omit=dev`, with Node 24 on the PATH and the dashboard
 * built beforehand, runs the service; nothing the running service imports is a dev dependency.
 *
 * The checkout (its git-tracked files and new files not ignored, plus the built `web/dist`, no
 * `node_modules`) is copied to a temporary folder and installed there exactly so; then the
 * server, the worker and the CLI are started from that copy with this test's Node 24 on the
 * database under test (a SQLite file, or a fresh PostgreSQL database). A module imported by any of
 * them but installed only as a dev dependency fails to load. It runs in every `npm test`, so CI
 * checks it on both databases (the database only changes which driver the server opens): the
 * whole file takes 30–45 s, ~10–18 s of it the install, which needs the npm registry or a warm
 * npm cache (CI's own `npm ci` fills it; `--prefer-offline` uses it without asking the registry).
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { TEST_ENCRYPTION_KEY, TEST_JWT_SECRET } from './helpers/app.ts';
import type { TestDatabase } from './helpers/database.ts';
import { createProcessDatabase, freePort } from './helpers/spawned-server.ts';
import { ensureDashboardBuilt } from './web/build.ts';

const ROOT = path.resolve(import.meta.dirname, '..');

/** The checkout as a deployment gets it: what git knows (new files included) and the built dashboard. */
function copyCheckout(target: string): void {
  const listed = spawnSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  assert.equal(listed.status, 0, `git ls-files: ${listed.stderr}`);
  for (const file of listed.stdout.split('\0')) {
    const from = path.join(ROOT, file);
    // Deleted in the working tree but still tracked: not part of what is deployed.
    if (!file || !fs.statSync(from, { throwIfNoEntry: false })?.isFile()) continue;
    fs.mkdirSync(path.dirname(path.join(target, file)), { recursive: true });
    fs.copyFileSync(from, path.join(target, file));
  }
  fs.cpSync(path.join(ROOT, 'web/dist'), path.join(target, 'web/dist'), { recursive: true });
}

/**
 * The environment of a process started from the copy: Node 24 first on the PATH, and nothing of
 * this test run's own npm (`npm test` exports its configuration as npm_* variables).
 */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!/^npm_/i.test(name) && !/^(DATABASE_URL|TEST_DATABASE_URL|REDIS_URL|NODE_OPTIONS)$/.test(name))
      env[name] = value;
  }
  env.PATH = `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}`;
  return { ...env, ...extra };
}

function run(
  command: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv },
): Promise<{ code: number | null; stdout: string; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      output += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, output }));
  });
}

/** Starts a long-running entry point and waits until `ready` says it is up. */
async function start(
  dir: string,
  entry: string,
  env: NodeJS.ProcessEnv,
  ready: (output: string) => Promise<boolean> | boolean,
): Promise<{ child: ChildProcess; output: () => string; stop: () => Promise<number | null> }> {
  const child = spawn(process.execPath, [entry], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const deadline = Date.now() + 30_000;
  while (!(await ready(output))) {
    if (child.exitCode !== null) throw new Error(`${entry} exited with ${child.exitCode}:\n${output}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${entry} did not start:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    child,
    output: () => output,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

describe('a production install: npm ci --omit=dev, then node src/server.ts', () => {
  let dir: string;
  let database: TestDatabase;
  let installSeconds = 0;
  const children: ChildProcess[] = [];

  before(async () => {
    await ensureDashboardBuilt();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'geofence-production-'));
    copyCheckout(path.join(dir, 'app'));
    const startedAt = performance.now();
    const install = await run('npm', ['ci', '--omit=dev', '--no-audit', '--no-fund', '--prefer-offline'], {
      cwd: path.join(dir, 'app'),
      env: cleanEnv(),
    });
    installSeconds = (performance.now() - startedAt) / 1000;
    assert.equal(install.code, 0, `npm ci --omit=dev failed:\n${install.output}`);
    database = await createProcessDatabase();
  });

  after(async () => {
    for (const child of children)
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await database?.drop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  /** The environment of the service in the copy: its own data folder and the database under test. */
  const serviceEnv = (extra: Record<string, string> = {}) =>
    cleanEnv({
      DATABASE_URL: database.url,
      DATA_DIR: path.join(dir, 'data'),
      JWT_SECRET: TEST_JWT_SECRET,
      ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
      LOG_LEVEL: 'info',
      ...extra,
    });

  test('the install has the production dependencies only', (t) => {
    t.diagnostic(`npm ci --omit=dev took ${installSeconds.toFixed(1)} s`);
    const modules = path.join(dir, 'app/node_modules');
    const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    for (const name of Object.keys(manifest.dependencies)) {
      assert.ok(fs.existsSync(path.join(modules, name, 'package.json')), `${name} installed`);
    }
    // The dev tools are not there (Node 24 itself included), so whatever loads below does not need them.
    assert.ok('typescript' in manifest.devDependencies && 'node' in manifest.devDependencies);
    for (const name of ['typescript', '@biomejs/biome', 'node', 'playwright-core', 'vite']) {
      assert.ok(!fs.existsSync(path.join(modules, name, 'package.json')), `dev dependency ${name} absent`);
    }
  });

  test('the server starts from it and serves the API, the probes and the dashboard', async () => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const server = await start(
      path.join(dir, 'app'),
      'src/server.ts',
      serviceEnv({ HOST: '127.0.0.1', PORT: String(port) }),
      async () => {
        try {
          return (await fetch(`${base}/healthz`)).status === 200;
        } catch {
          return false; // not listening yet
        }
      },
    );
    children.push(server.child);
    assert.equal((await fetch(`${base}/readyz`)).status, 200);
    const page = await fetch(`${base}/`);
    assert.equal(page.status, 200, server.output());
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(await page.text(), /<div id="root"><\/div>/);
    const registered = await fetch(`${base}/api/v1/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'deploy@example.com', password: 'a long enough password' }),
    });
    assert.equal(registered.status, 201, await registered.text());
    assert.equal(await server.stop(), 0, `clean exit on SIGTERM:\n${server.output()}`);
  });

  test('the CLI and the worker start from it too', async () => {
    const migrate = await run(process.execPath, ['src/cli.ts', 'migrate'], {
      cwd: path.join(dir, 'app'),
      env: serviceEnv(),
    });
    assert.equal(migrate.code, 0, migrate.output);
    assert.ok(Array.isArray(JSON.parse(migrate.stdout).applied), migrate.output);
    const worker = await start(path.join(dir, 'app'), 'src/worker.ts', serviceEnv(), (output) =>
      output.includes('job worker started'),
    );
    children.push(worker.child);
    assert.equal(await worker.stop(), 0, `clean exit on SIGTERM:\n${worker.output()}`);
  });
});
