/**
 * The service as an operator runs it: `node src/server.ts` in its own process, then SIGTERM.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { freePort } from './helpers/spawned-server.ts';

async function waitForHealth(base: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    try {
      const res = await fetch(`${base}/healthz`);
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('server did not become healthy');
}

describe('server process', () => {
  let dir: string;
  let child: ChildProcess;
  let base: string;
  let stderr = '';
  let stdout = '';

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'geofence-server-'));
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    // DATABASE_URL unset: the embedded SQLite default under DATA_DIR, exactly like `npm start`.
    const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), DATA_DIR: dir, LOG_LEVEL: 'info' };
    delete env.DATABASE_URL;
    child = spawn(process.execPath, ['src/server.ts'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    await waitForHealth(base, child);
  });

  after(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('answers probes and the OpenAPI document over real HTTP, on the default SQLite file', async () => {
    assert.equal((await fetch(`${base}/healthz`)).status, 200);
    assert.equal((await fetch(`${base}/readyz`)).status, 200);
    const doc = (await (await fetch(`${base}/openapi/openapi.json`)).json()) as { openapi: string };
    assert.match(doc.openapi, /^3\.0\./);
    assert.ok(fs.existsSync(path.join(dir, 'geofence.db')), 'database file created in the data folder');
    assert.ok(fs.existsSync(path.join(dir, 'jwt.secret')), 'generated JWT secret kept in the data folder');
  });

  test('SIGTERM lets an in-flight request finish, then exits 0', async () => {
    const inFlight = fetch(`${base}/api/v1/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'late@example.com', password: 'a long password' }),
    });
    await new Promise((r) => setTimeout(r, 15));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    const res = await inFlight;
    assert.equal(res.status, 201, 'the request that was already running completed');
    assert.equal(await exited, 0, `clean exit (stderr: ${stderr})`);
    assert.match(stdout, /shutting down/);
    await assert.rejects(fetch(`${base}/healthz`), 'no longer listening');
  });
});

describe('operator CLI', () => {
  test('migrate, create-user and create-api-key print JSON; the key works', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'geofence-cli-'));
    const env = { ...process.env, DATABASE_URL: `sqlite:${path.join(dir, 'db.sqlite')}`, DATA_DIR: dir };
    const run = (...args: string[]) =>
      spawnSync(process.execPath, ['src/cli.ts', ...args], { env, encoding: 'utf8', timeout: 30_000 });
    try {
      const migrate = run('migrate');
      assert.equal(migrate.status, 0, migrate.stderr);
      assert.deepEqual(JSON.parse(migrate.stdout).applied.length > 0, true);
      const user = run(
        'create-user',
        '--email',
        'ops@example.com',
        '--password',
        'long password',
        '--workspace',
        'Ops',
      );
      assert.equal(user.status, 0, user.stderr);
      assert.equal(JSON.parse(user.stdout).workspace.name, 'Ops');
      const key = run(
        'create-api-key',
        '--email',
        'ops@example.com',
        '--name',
        'ci',
        '--scopes',
        'geofences:read',
      );
      assert.equal(key.status, 0, key.stderr);
      const created = JSON.parse(key.stdout);
      assert.match(created.key, /^gf_live_/);
      assert.deepEqual(created.scopes, ['geofences:read']);
      const unknown = run('create-api-key', '--email', 'nobody@example.com', '--name', 'x');
      assert.equal(unknown.status, 1);
      assert.match(unknown.stderr, /No user with that e-mail/);
      const bad = run('frobnicate');
      assert.equal(bad.status, 1);
      assert.match(bad.stderr, /Unknown command/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
