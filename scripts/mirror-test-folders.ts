/**
 * Moves test files into the folder that mirrors the src/ domain they test (test/<domain>/ for
 * src/<domain>/), with `git mv`, and rewrites every relative import (and `new URL(…,
 * import.meta.url)`) in the repository's TypeScript that pointed at a moved file or was written
 * from a moved file's old place, plus mentions of the old paths in the docs. A one-off:
 *
 *   npx node scripts/mirror-test-folders.ts --dry-run   # print the moves, change nothing
 *   npx node scripts/mirror-test-folders.ts             # move, rewrite, print what to check by hand
 *
 * A whole folder moves by its rule unless one of its files has a rule of its own, so test files
 * added to an old folder later move with it. Nothing is touched if a destination already exists.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Old folder → the folder mirroring what its tests are about. */
const FOLDER_RULES: Record<string, string> = {
  // Registration, login, tokens, API keys and their scopes, login/refresh limits: src/auth.
  'test/identity': 'test/auth',
  // Ingestion, evaluation, history and their storage: src/locations.
  'test/pipeline': 'test/locations',
  // The process logger's batched destination, made for the per-request log line (ADR 012).
  'test/logging': 'test/http',
};

/** Files whose subject is another domain than their folder's rule says. */
const FILE_RULES: Record<string, string> = {
  // Every route answering 404 for another workspace's ids: tenancy, src/workspaces.
  'test/identity/isolation.test.ts': 'test/workspaces',
};

const dryRun = process.argv.includes('--dry-run');

function git(...args: string[]): string {
  return execFileSync('git', args, { encoding: 'utf8' });
}

function trackedFiles(...patterns: string[]): string[] {
  return git('ls-files', '--', ...patterns)
    .split('\n')
    .filter((file) => file !== '');
}

function planMoves(): Map<string, string> {
  const moves = new Map<string, string>();
  for (const file of trackedFiles('test')) {
    const folder = path.posix.dirname(file);
    const destination = FILE_RULES[file] ?? FOLDER_RULES[folder];
    if (destination !== undefined) moves.set(file, path.posix.join(destination, path.posix.basename(file)));
  }
  const targets = new Set<string>();
  for (const [from, to] of moves) {
    if (fs.existsSync(to) || targets.has(to)) throw new Error(`${from} → ${to}: the destination is taken`);
    targets.add(to);
  }
  return moves;
}

/** A relative specifier written in `oldFile`, as it must read in `newFile` once `moves` are done. */
function respecify(specifier: string, oldFile: string, newFile: string, moves: Map<string, string>): string {
  const oldTarget = path.posix.normalize(path.posix.join(path.posix.dirname(oldFile), specifier));
  const newTarget = moves.get(oldTarget) ?? oldTarget;
  let relative = path.posix.relative(path.posix.dirname(newFile), newTarget) || '.';
  if (!relative.startsWith('.')) relative = `./${relative}`;
  // Keep a trailing slash (a folder URL such as new URL('../..', import.meta.url) has none to keep).
  return specifier.endsWith('/') && !relative.endsWith('/') ? `${relative}/` : relative;
}

const RELATIVE_SPECIFIER = [
  /(\bfrom\s+')(\.\.?\/[^']*)(')/g,
  /(\bimport\s*\(\s*')(\.\.?\/[^']*)(')/g,
  /(\bimport\s+')(\.\.?\/[^']*)(')/g,
  /(\bnew URL\(\s*')(\.\.?\/?[^']*)(',\s*import\.meta\.url)/g,
];

function rewriteImports(moves: Map<string, string>): string[] {
  const movedBack = new Map([...moves].map(([from, to]) => [to, from]));
  const toCheck: string[] = [];
  for (const file of trackedFiles('*.ts')) {
    const oldFile = movedBack.get(file) ?? file;
    const text = fs.readFileSync(file, 'utf8');
    let rewritten = text;
    for (const pattern of RELATIVE_SPECIFIER) {
      rewritten = rewritten.replace(pattern, (_all, head: string, specifier: string, tail: string) => {
        return `${head}${respecify(specifier, oldFile, file, moves)}${tail}`;
      });
    }
    if (rewritten !== text) fs.writeFileSync(file, rewritten);
    const depthChanged =
      path.posix.dirname(oldFile).split('/').length !== path.posix.dirname(file).split('/').length;
    if (
      depthChanged &&
      /import\.meta\.(dirname|filename|url)/.test(rewritten.replace(/new URL\([^)]*\)/g, ''))
    ) {
      toCheck.push(`${file}: moved to another depth and builds paths from import.meta; check them`);
    }
  }
  return toCheck;
}

/** Old paths named in Markdown and TypeScript text (docs, comments), replaced by the new ones. */
function rewriteMentions(moves: Map<string, string>): string[] {
  const toCheck: string[] = [];
  const oldFolders = new Set([...moves.keys()].map((file) => `${path.posix.dirname(file)}/`));
  const self = path.posix.relative(process.cwd(), fileURLToPath(import.meta.url));
  for (const file of trackedFiles('*.md', '*.ts').filter((name) => name !== self)) {
    const text = fs.readFileSync(file, 'utf8');
    let rewritten = text;
    for (const [from, to] of moves) rewritten = rewritten.replaceAll(from, to);
    if (rewritten !== text) fs.writeFileSync(file, rewritten);
    for (const folder of oldFolders) {
      if (rewritten.includes(folder))
        toCheck.push(`${file}: still mentions ${folder} (a path split over lines?)`);
    }
  }
  return toCheck;
}

/** Test folders with no src/ folder of the same name (besides the helpers and fixtures). */
function unmirroredFolders(): string[] {
  const folders = new Set(trackedFiles('test').map((file) => file.split('/')[1] ?? ''));
  return [...folders]
    .filter((name) => !name.endsWith('.ts') && !['helpers', 'fixtures'].includes(name))
    .filter((name) => !fs.existsSync(path.posix.join('src', name)))
    .map((name) => `test/${name}/ mirrors no src/ folder`);
}

const moves = planMoves();
for (const [from, to] of moves) console.log(`${from} → ${to}`);
if (!dryRun) {
  for (const [from, to] of moves) {
    fs.mkdirSync(path.posix.dirname(to), { recursive: true });
    git('mv', from, to);
  }
  const toCheck = [...rewriteImports(moves), ...rewriteMentions(moves), ...unmirroredFolders()];
  for (const line of toCheck) console.log(`check: ${line}`);
  console.log('Now: npm run check, then the tests.');
}
