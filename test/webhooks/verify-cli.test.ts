/**
 * `cli verify-webhook` as an operator runs it: a real child process of src/cli.ts, the body from a
 * file or from stdin, exit code 0 (valid), 1 (invalid) or 2 (usage).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { generateWebhookSecret, signBody } from '../../src/webhooks/signature.ts';

const CLI = resolve(import.meta.dirname, '../../src/cli.ts');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runCli(
  args: string[],
  options: { stdin?: Buffer | string; env?: Record<string, string> } = {},
): Promise<Run> {
  return new Promise((resolvePromise, reject) => {
    // No DATABASE_URL or secrets: the command must not need configuration or a database.
    const child = spawn(process.execPath, [CLI, 'verify-webhook', ...args], {
      env: { PATH: process.env.PATH ?? '', ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code, stdout, stderr }));
    child.stdin.end(options.stdin ?? '');
  });
}

describe('cli verify-webhook', () => {
  const secret = generateWebhookSecret();
  // A body whose bytes matter: non-ASCII text and a trailing newline, as stored by a receiver.
  const body = Buffer.from('{"event":"geofence.enter","data":{"geofence_name":"Café Zürich"}}\n', 'utf8');
  const signature = signBody(body, secret);
  let dir = '';
  let bodyFile = '';

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'verify-cli-'));
    bodyFile = join(dir, 'body.json');
    writeFileSync(bodyFile, body);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('valid body file → prints valid, exit 0', async () => {
    const run = await runCli(['--secret', secret, '--signature', signature, '--body-file', bodyFile]);
    assert.deepEqual({ code: run.code, stdout: run.stdout }, { code: 0, stdout: 'valid\n' }, run.stderr);
  });

  it('valid body on stdin → valid', async () => {
    const run = await runCli(['--secret', secret, '--signature', signature], { stdin: body });
    assert.deepEqual({ code: run.code, stdout: run.stdout }, { code: 0, stdout: 'valid\n' }, run.stderr);
  });

  it('the secret may come from $WEBHOOK_SECRET', async () => {
    const run = await runCli(['--signature', signature, '--body-file', bodyFile], {
      env: { WEBHOOK_SECRET: secret },
    });
    assert.equal(run.code, 0, run.stderr);
  });

  it('one changed byte, the trailing newline dropped, another secret or a bad header → invalid, exit 1', async () => {
    const changed = Buffer.from(body);
    changed[10] = (changed[10] ?? 0) ^ 1;
    const cases: Array<[string[], Buffer]> = [
      [['--secret', secret, '--signature', signature], changed],
      [['--secret', secret, '--signature', signature], body.subarray(0, body.length - 1)],
      [['--secret', generateWebhookSecret(), '--signature', signature], body],
      [['--secret', secret, '--signature', signature.slice('sha256='.length)], body],
      [['--secret', secret, '--signature', 'sha256=zz'], body],
    ];
    for (const [args, stdin] of cases) {
      const run = await runCli(args, { stdin });
      assert.deepEqual(
        { code: run.code, stdout: run.stdout },
        { code: 1, stdout: 'invalid\n' },
        args.join(' '),
      );
    }
  });

  it('missing --signature or secret → usage on stderr, exit 2', async () => {
    for (const args of [
      ['--secret', secret],
      ['--signature', signature],
    ]) {
      const run = await runCli(args, { stdin: body });
      assert.equal(run.code, 2);
      assert.equal(run.stdout, '');
      assert.match(run.stderr, /Usage: verify-webhook/);
    }
  });
});
