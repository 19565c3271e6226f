/**
 * Builds the dashboard (`web/dist`) with Vite when its sources changed since the last build, so
 * `npm start` on a fresh clone serves a dashboard with no separate step and a restart costs nothing.
 * `--force` builds anyway. The sources are `web/`'s own and the server modules it imports (the
 * workflow preview renders with `src/workflows/templates.ts`), followed through their imports.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const WEB = path.resolve(import.meta.dirname, '../web');
const STAMP = path.join(WEB, 'dist/.source-hash');
const SOURCES = ['src', 'index.html', 'vite.config.ts', 'package.json'];

const RELATIVE_IMPORT = /\bfrom\s+'(\.{1,2}\/[^']+\.tsx?)'/g;

function sourceHash(): string {
  const hash = createHash('sha256');
  const outside = new Set<string>();
  const add = (file: string, text: Buffer): void => {
    hash.update(path.relative(WEB, file)).update('\0').update(text).update('\0');
  };
  /** Server modules a file imports, by relative path (type-only imports too: a superset is safe). */
  const follow = (file: string, text: string): void => {
    for (const match of text.matchAll(RELATIVE_IMPORT)) {
      const target = path.resolve(path.dirname(file), match[1] as string);
      if (target.startsWith(`${WEB}${path.sep}`) || outside.has(target) || !fs.existsSync(target)) continue;
      outside.add(target);
      follow(target, fs.readFileSync(target, 'utf8'));
    }
  };
  const visit = (file: string): void => {
    const stat = fs.statSync(file);
    if (stat.isDirectory()) {
      for (const name of fs.readdirSync(file).sort()) visit(path.join(file, name));
    } else {
      const text = fs.readFileSync(file);
      add(file, text);
      if (/\.tsx?$/.test(file)) follow(file, text.toString('utf8'));
    }
  };
  for (const name of SOURCES) visit(path.join(WEB, name));
  for (const file of [...outside].sort()) add(file, fs.readFileSync(file));
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
