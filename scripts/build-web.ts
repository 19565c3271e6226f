/**
 * Builds the dashboard (`web/dist`) with Vite when its sources changed since the last build, so
 * `npm start` on a fresh clone serves a dashboard with no separate step and a restart costs nothing.
 * `--force` builds anyway.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const WEB = path.resolve(import.meta.dirname, '../web');
const STAMP = path.join(WEB, 'dist/.source-hash');
const SOURCES = ['src', 'index.html', 'vite.config.ts', 'package.json'];

function sourceHash(): string {
  const hash = createHash('sha256');
  const visit = (file: string): void => {
    const stat = fs.statSync(file);
    if (stat.isDirectory()) {
      for (const name of fs.readdirSync(file).sort()) visit(path.join(file, name));
    } else {
      hash.update(path.relative(WEB, file)).update('\0').update(fs.readFileSync(file)).update('\0');
    }
  };
  for (const name of SOURCES) visit(path.join(WEB, name));
  return hash.digest('hex');
}

const hash = sourceHash();
const built = fs.existsSync(STAMP) ? fs.readFileSync(STAMP, 'utf8') : '';
if (built === hash && !process.argv.includes('--force')) {
  process.stdout.write('dashboard is up to date (web/dist)\n');
} else {
  const vite = path.join(
    path.dirname(createRequire(import.meta.url).resolve('vite/package.json')),
    'bin/vite.js',
  );
  const result = spawnSync(process.execPath, [vite, 'build', '--logLevel', 'warn'], {
    cwd: WEB,
    stdio: 'inherit',
  });
  if (result.status !== 0) process.exit(result.status ?? 1);
  fs.writeFileSync(STAMP, hash);
  process.stdout.write('dashboard built (web/dist)\n');
}
