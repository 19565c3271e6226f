/**
 * The built dashboard (`web/dist`) for the tests that serve it. `scripts/build-web.ts` rebuilds
 * only when the sources changed, so calling it costs a hash when CI built first (`npm run
 * build:web`). Test files run in parallel processes, and Vite empties `web/dist` before it writes:
 * a lock (a directory, created atomically) keeps a second file from building at the same time or
 * from starting a server on a half-written folder.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const WEB_DIST = path.resolve(import.meta.dirname, '../../web/dist');
const BUILD_SCRIPT = path.resolve(import.meta.dirname, '../../scripts/build-web.ts');
/** One lock per checkout: two worktrees on one machine build their own dashboards. */
const LOCK = path.join(
  os.tmpdir(),
  `geofence-web-build-${createHash('sha256').update(WEB_DIST).digest('hex').slice(0, 12)}.lock`,
);
/** A lock older than this was left by a process that died while building. */
const STALE_MS = 180_000;

let built: Promise<void> | undefined;

export function ensureDashboardBuilt(): Promise<void> {
  built ??= buildUnderLock();
  return built;
}

async function buildUnderLock(): Promise<void> {
  const deadline = Date.now() + STALE_MS;
  for (;;) {
    try {
      fs.mkdirSync(LOCK);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const age = Date.now() - (fs.statSync(LOCK, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > STALE_MS) fs.rmSync(LOCK, { recursive: true, force: true });
      else if (Date.now() > deadline) throw new Error(`the dashboard build lock ${LOCK} was never released`);
      else await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  try {
    const result = spawnSync(process.execPath, [BUILD_SCRIPT], { encoding: 'utf8' });
    if (result.status !== 0) {
      throw new Error(`building the dashboard failed:\n${result.stdout}${result.stderr}`);
    }
  } finally {
    fs.rmSync(LOCK, { recursive: true, force: true });
  }
  if (!fs.existsSync(path.join(WEB_DIST, 'index.html'))) throw new Error(`no ${WEB_DIST}/index.html`);
}
