/**
 * The folders of src/ depend on each other in one direction. A loop between folders (a → b → … → a,
 * through any files) is refused unless every edge of it is listed under "Allowed folder loops" in
 * docs/architecture.md with its reason, and nothing in webhooks/ may import workflows/ or the
 * reverse. A type import counts like a value import: it ties the two folders together all the same.
 * Files directly in src/ are the composition root, which may import every folder, so they are left
 * out. The imports are read from the text (no compiler), in a fixed order, so a failure names the
 * same files every time.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';

const REPO = path.resolve(import.meta.dirname, '../..');
const SRC = path.join(REPO, 'src');
const ARCHITECTURE = path.join(REPO, 'docs/architecture.md');
const LOOPS_HEADING = 'Allowed folder loops';
/** Folders that may never import each other, in either direction. */
const SEPARATE: ReadonlyArray<readonly [string, string]> = [['webhooks', 'workflows']];

/** `import … from`, `export … from` (type-only too, across lines), bare `import '…'`, `import('…')`,
 * and `declare module '…'` (an augmentation depends on the module it augments). */
const SPECIFIER_PATTERNS = [
  /^[ \t]*(?:import|export)\b[\w*${},\s]*?\bfrom\s*(['"])(.+?)\1/gm,
  /^[ \t]*import\s*(['"])(.+?)\1/gm,
  /\bimport\s*\(\s*(['"])(.+?)\1\s*\)/g,
  /^[ \t]*declare\s+module\s+(['"])(.+?)\1/gm,
];

/** The module specifiers a source file imports or re-exports, in order of appearance. */
function importSpecifiers(source: string): string[] {
  const found: Array<{ at: number; specifier: string }> = [];
  for (const pattern of SPECIFIER_PATTERNS) {
    for (const match of source.matchAll(pattern)) {
      found.push({ at: match.index, specifier: match[2] as string });
    }
  }
  return found.sort((a, b) => a.at - b.at).map((f) => f.specifier);
}

interface FolderGraph {
  files: number;
  /** `from` folder → `to` folder → the file pairs behind that edge ("src/a/x.ts → src/b/y.ts"). */
  edges: Map<string, Map<string, string[]>>;
}

/** The top-level folder of a path inside src/, or undefined for the root's own files. */
function folderOf(relative: string): string | undefined {
  const slash = relative.indexOf('/');
  return slash === -1 ? undefined : relative.slice(0, slash);
}

function folderGraph(): FolderGraph {
  const files = readdirSync(SRC, { recursive: true, encoding: 'utf8' })
    .map((name) => name.split(path.sep).join('/'))
    .filter((name) => name.endsWith('.ts'))
    .sort();
  const edges = new Map<string, Map<string, string[]>>();
  for (const file of files) {
    const from = folderOf(file);
    if (from === undefined) continue;
    for (const specifier of importSpecifiers(readFileSync(path.join(SRC, file), 'utf8'))) {
      if (!specifier.startsWith('.')) continue;
      const target = path.relative(SRC, path.resolve(SRC, path.dirname(file), specifier));
      const targetName = target.split(path.sep).join('/');
      if (targetName.startsWith('../')) continue;
      const to = folderOf(targetName);
      if (to === undefined || to === from) continue;
      const byTarget = edges.get(from) ?? new Map<string, string[]>();
      edges.set(from, byTarget);
      const pairs = byTarget.get(to) ?? [];
      byTarget.set(to, pairs);
      const pair = `src/${file} → src/${targetName}`;
      if (!pairs.includes(pair)) pairs.push(pair);
    }
  }
  return { files: files.length, edges };
}

function targetsOf(graph: FolderGraph, folder: string): string[] {
  return [...(graph.edges.get(folder)?.keys() ?? [])].sort();
}

/** Strongly connected components of more than one folder (Tarjan), members and list sorted. */
function folderLoops(graph: FolderGraph): string[][] {
  const folders = [
    ...new Set([...graph.edges.keys(), ...[...graph.edges.values()].flatMap((m) => [...m.keys()])]),
  ];
  folders.sort();
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const loops: string[][] = [];
  const visit = (folder: string): void => {
    index.set(folder, index.size);
    low.set(folder, index.get(folder) as number);
    stack.push(folder);
    onStack.add(folder);
    for (const next of targetsOf(graph, folder)) {
      if (!index.has(next)) {
        visit(next);
        low.set(folder, Math.min(low.get(folder) as number, low.get(next) as number));
      } else if (onStack.has(next)) {
        low.set(folder, Math.min(low.get(folder) as number, index.get(next) as number));
      }
    }
    if (low.get(folder) !== index.get(folder)) return;
    const component: string[] = [];
    let member: string | undefined;
    do {
      member = stack.pop() as string;
      onStack.delete(member);
      component.push(member);
    } while (member !== folder);
    if (component.length > 1) loops.push(component.sort());
  };
  for (const folder of folders) if (!index.has(folder)) visit(folder);
  return loops.sort((a, b) => (a[0] as string).localeCompare(b[0] as string));
}

const pairKey = (a: string, b: string): string => [a, b].sort().join(' ↔ ');

/**
 * The pairs listed in docs/architecture.md under the "Allowed folder loops" heading, one a line:
 * "- `a` ↔ `b`: reason". Any other list line there is a mistake, so it is reported, not skipped.
 */
function allowedLoops(): { pairs: Map<string, string>; malformed: string[] } {
  const lines = readFileSync(ARCHITECTURE, 'utf8').split('\n');
  const start = lines.findIndex(
    (line) => /^#+\s+/.test(line) && line.replace(/^#+\s+/, '') === LOOPS_HEADING,
  );
  assert.notEqual(start, -1, `docs/architecture.md has no "${LOOPS_HEADING}" heading`);
  const pairs = new Map<string, string>();
  const malformed: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (/^#/.test(line)) break;
    if (!/^\s*[-*]\s/.test(line)) continue;
    const match = /^- `([\w-]+)` ↔ `([\w-]+)`: (\S.*)$/.exec(line);
    if (match === null || match[1] === match[2]) malformed.push(line);
    else pairs.set(pairKey(match[1] as string, match[2] as string), match[3] as string);
  }
  return { pairs, malformed };
}

function describeEdge(graph: FolderGraph, from: string, to: string): string {
  const pairs = graph.edges.get(from)?.get(to) ?? [];
  return `  ${from} → ${to}:\n${pairs.map((pair) => `    ${pair}`).join('\n')}`;
}

describe('imports between the folders of src/', () => {
  const graph = folderGraph();

  test('the scan reads every kind of import and export, type-only ones too', () => {
    const source = [
      "import { a, type B } from './a.ts';",
      'import type {',
      '  C,',
      '  D,',
      "} from '../c/d.ts';",
      "export { e } from './e.ts';",
      "export * from './f.ts';",
      "export type { G } from './g.ts';",
      "import './h.ts';",
      "const i = await import('./i.ts');",
      "declare module '../j/k.ts' {}",
      'export const from = 1;',
      " * import { x } from './comment.ts';",
      "const text = 'from ./nowhere.ts';",
    ].join('\n');
    assert.deepEqual(importSpecifiers(source), [
      './a.ts',
      '../c/d.ts',
      './e.ts',
      './f.ts',
      './g.ts',
      './h.ts',
      './i.ts',
      '../j/k.ts',
    ]);
    assert.ok(graph.files > 100, `${graph.files} files under src/`);
    assert.ok(graph.edges.size > 10, `${graph.edges.size} folders import another`);
  });

  for (const [a, b] of SEPARATE) {
    test(`nothing in ${a}/ imports ${b}/, nor the reverse`, () => {
      const found = [
        ...(graph.edges.get(a)?.has(b) ? [describeEdge(graph, a, b)] : []),
        ...(graph.edges.get(b)?.has(a) ? [describeEdge(graph, b, a)] : []),
      ];
      assert.equal(found.length, 0, `${a}/ and ${b}/ must not import each other:\n${found.join('\n')}`);
    });
  }

  test(`every loop between folders is listed under "${LOOPS_HEADING}" in docs/architecture.md`, () => {
    const { pairs, malformed } = allowedLoops();
    assert.deepEqual(malformed, [], 'list lines that are not "- `a` ↔ `b`: reason"');
    const problems: string[] = [];
    for (const loop of folderLoops(graph)) {
      const unlisted: string[] = [];
      for (const from of loop) {
        for (const to of targetsOf(graph, from)) {
          if (loop.includes(to) && !pairs.has(pairKey(from, to)))
            unlisted.push(describeEdge(graph, from, to));
        }
      }
      if (unlisted.length > 0) {
        problems.push(`loop through ${loop.join(', ')}; edges not listed:\n${unlisted.join('\n')}`);
      }
    }
    assert.equal(problems.length, 0, `folder import loops:\n${problems.join('\n')}`);
  });

  test('every listed loop is still one, so the list only holds what is true', () => {
    const loops = folderLoops(graph);
    const stale = [...allowedLoops().pairs.keys()].filter((key) => {
      const [a, b] = key.split(' ↔ ') as [string, string];
      const together = loops.some((loop) => loop.includes(a) && loop.includes(b));
      const linked = graph.edges.get(a)?.has(b) || graph.edges.get(b)?.has(a);
      return !(together && linked);
    });
    assert.deepEqual(stale, [], 'listed under "Allowed folder loops" but no longer a loop');
  });
});
