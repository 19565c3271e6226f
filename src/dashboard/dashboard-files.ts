/**
 * The built dashboard (`web/dist`), read into memory once at start: a few hundred KiB of hashed
 * files that never change while the process runs, so serving them is a map lookup.
 */
import fs from 'node:fs';
import path from 'node:path';

export interface DashboardFile {
  body: Buffer;
  contentType: string;
}

export interface DashboardFiles {
  /** `index.html`, or undefined when the dashboard was not built. */
  index: Buffer | undefined;
  /** Hashed files under `/assets/`, by their name. */
  assets: Map<string, DashboardFile>;
}

const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.json': 'application/json',
  '.map': 'application/json',
};

export function loadDashboardFiles(dir: string): DashboardFiles {
  const indexPath = path.join(dir, 'index.html');
  const index = fs.existsSync(indexPath) ? fs.readFileSync(indexPath) : undefined;
  const assets = new Map<string, DashboardFile>();
  const assetsDir = path.join(dir, 'assets');
  if (fs.existsSync(assetsDir)) {
    for (const name of fs.readdirSync(assetsDir)) {
      const contentType = CONTENT_TYPES[path.extname(name)];
      if (!contentType) continue;
      assets.set(name, { body: fs.readFileSync(path.join(assetsDir, name)), contentType });
    }
  }
  return { index, assets };
}
