/**
 * Generates the dashboard's API types (`web/src/api/schema.ts`) from the served OpenAPI document
 * with openapi-typescript, so the dashboard fails to type-check when the API drifts.
 * `--check` compares instead of writing and exits 1 when the committed file is stale.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';

const TARGET = path.resolve(import.meta.dirname, '../web/src/api/schema.ts');
const HEADER =
  '// Generated from the OpenAPI document by `npm run web:types` (openapi-typescript). Do not edit.\n';

/** The generated text for the current code's document. */
export function generateWebApiTypes(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'web-api-types-'));
  try {
    const doc = path.join(dir, 'openapi.json');
    run([path.resolve(import.meta.dirname, 'write-openapi.ts'), doc]);
    const cli = path.join(
      path.dirname(createRequire(import.meta.url).resolve('openapi-typescript/package.json')),
      'bin/cli.js',
    );
    const out = path.join(dir, 'schema.ts');
    run([cli, doc, '--output', out]);
    return HEADER + fs.readFileSync(out, 'utf8');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function run(args: string[]): void {
  const result = spawnSync(process.execPath, args, { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`${args[0]} failed: ${result.stderr || result.stdout}`);
}

if (import.meta.main) {
  const text = generateWebApiTypes();
  if (process.argv.includes('--check')) {
    const current = fs.existsSync(TARGET) ? fs.readFileSync(TARGET, 'utf8') : '';
    if (current !== text) {
      process.stderr.write(`${TARGET} is stale: run npm run web:types\n`);
      process.exit(1);
    }
    process.stdout.write('web API types are current\n');
  } else {
    fs.mkdirSync(path.dirname(TARGET), { recursive: true });
    fs.writeFileSync(TARGET, text);
    process.stdout.write(`wrote ${path.relative(process.cwd(), TARGET)}\n`);
  }
}
