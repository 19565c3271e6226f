/**
 * A client generated from the document has a named type per resource: openapi-typescript's command
 * line turns the served document into TypeScript, and the TypeScript compiler checks that the
 * output compiles and that `components["schemas"]["Geofence"]` and the others exist. Operations are
 * named by their `operationId` (`operations["createGeofence"]`).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { NAMED_SCHEMAS, servedDocument } from '../helpers/openapi.ts';

/** Runs the TypeScript compiler to its end (synchronously: no pipe outlives the test); its output when it fails. */
function tscErrors(args: string[], cwd: string): string {
  const result = spawnSync(process.execPath, [TSC, ...args], { cwd, encoding: 'utf8' });
  return result.status === 0 ? '' : `${result.stdout}${result.stderr}` || `exit ${result.status}`;
}
const OPENAPI_TS = path.join(
  path.dirname(createRequire(import.meta.url).resolve('openapi-typescript/package.json')),
  'bin/cli.js',
);
const TSC = path.join(
  path.dirname(createRequire(import.meta.url).resolve('typescript/package.json')),
  'bin/tsc',
);

describe('openapi-typescript on the document', () => {
  let t: TestApp;
  let generated: string;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'openapi-ts-'));

  before(async () => {
    t = await startTestApp();
    // openapi-typescript's own command line, as a customer would run it, in a process of its own.
    fs.writeFileSync(path.join(dir, 'openapi.json'), JSON.stringify(await servedDocument(t)));
    const cli = spawnSync(process.execPath, [OPENAPI_TS, 'openapi.json', '--output', 'api.ts'], {
      cwd: dir,
      encoding: 'utf8',
    });
    assert.equal(cli.status, 0, cli.stderr);
    generated = fs.readFileSync(path.join(dir, 'api.ts'), 'utf8');
  });
  after(async () => {
    fs.rmSync(dir, { recursive: true, force: true });
    await t.close();
  });

  test('operations are named by their operationId and use the named types', () => {
    const paths = generated.slice(0, generated.indexOf('export interface components'));
    assert.match(paths, /"\/api\/v1\/geofences": \{[^}]*post: operations\["createGeofence"\];/);
    const start = generated.indexOf('export interface operations');
    assert.ok(start > 0, 'an operations interface keyed by operationId');
    const operations = generated.slice(start);
    assert.match(operations, /\n {2}createGeofence: \{/);
    assert.match(operations, /components\["schemas"\]\["Geofence"\]/);
    assert.match(operations, /components\["schemas"\]\["Error"\]/);
  });

  test('the output compiles and has a type for every resource', () => {
    const uses = NAMED_SCHEMAS.map((name) => `export type ${name} = components['schemas']['${name}'];`);
    fs.writeFileSync(
      path.join(dir, 'use.ts'),
      [
        "import type { components } from './api.ts';",
        ...uses,
        // A named type is a real shape, not `unknown`: a circle geometry is one of its values.
        "export const circle: Geofence['geometry'] = { type: 'Circle', coordinates: [13.4, 52.5], radius: 50 };",
        '',
      ].join('\n'),
    );
    const args = ['--noEmit', '--strict', '--target', 'es2022', '--module', 'nodenext'];
    const compiled = tscErrors([...args, '--allowImportingTsExtensions', 'use.ts'], dir);
    assert.equal(compiled, '', 'tsc reports no error');
  });

  test('a missing type fails to compile, so the check above can fail', () => {
    fs.writeFileSync(
      path.join(dir, 'missing.ts'),
      "import type { components } from './api.ts';\nexport type Nope = components['schemas']['NoSuchResource'];\n",
    );
    const args = ['--noEmit', '--strict', '--target', 'es2022', '--module', 'nodenext'];
    const failed = tscErrors([...args, '--allowImportingTsExtensions', 'missing.ts'], dir) !== '';
    assert.ok(failed, 'tsc rejects an unknown schema name');
  });
});
