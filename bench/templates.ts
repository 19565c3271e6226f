/**
 * The worst a workflow template can cost within its bounds (contract §6 "Rendering is bounded",
 * ADR 014): adversarial templates of at most the longest configurable length (20,000 characters,
 * `action-configs.schemas.ts`) over contexts with large metadata, each parsed (as on save) and
 * rendered (as an attempt does) in this process. Prints, per case, the template's length, how
 * the render ended (bytes of output or the bound it hit) and the median and slowest time over
 * several rounds: the time the event loop is held. Human-readable lines, then one JSON line.
 *
 * `npx node bench/templates.ts [--rounds 25]` (the project's Node 24)
 */
import { parseArgs } from 'node:util';
import { MAX_TEMPLATE_SECTION_ITERATIONS, TemplateBudgetError } from '../src/workflows/template-budget.ts';
import {
  type Escaping,
  renderTemplate,
  type TemplateContext,
  templateProblem,
} from '../src/workflows/templates.ts';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '25' } } });
const ROUNDS = Number(values.rounds);

/** The longest template any action accepts (email `body`, sns `message`). */
const MAX_LENGTH = 20_000;

/** `unit` repeated as often as fits between `head` and `tail` within MAX_LENGTH. */
function fill(head: string, unit: string, tail = ''): string {
  const room = MAX_LENGTH - head.length - tail.length;
  return head + unit.repeat(Math.floor(room / unit.length)) + tail;
}

function nest(depth: number, name: string, inner: string): string {
  return `{{#${name}}}`.repeat(depth) + inner + `{{/${name}}}`.repeat(depth);
}

/** Metadata nested 16 levels deep (contract §1's limit): `{a: {a: … {a: 'x'}}}`. */
function deepObject(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = { a: 'x' };
  for (let i = 1; i < levels; i += 1) value = { a: value };
  return value;
}

function context(): TemplateContext {
  const items400 = Array.from({ length: 400 }, (_, i) => ({ name: `item ${i}`, n: i }));
  const items10k = Array.from({ length: MAX_TEMPLATE_SECTION_ITERATIONS }, (_, i) => i);
  // About 1 MB of device metadata: the most a device body (1 MiB) carries.
  const bulky = Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`key${i}`, 'v'.repeat(40)]));
  const metadata = {
    items: items400,
    big: items10k,
    deep: deepObject(16),
    ampersands: '&'.repeat(10_000),
    empty: {},
    euro: '€'.repeat(1_000),
  };
  return JSON.parse(
    JSON.stringify({
      event: 'geofence.enter',
      event_type: 'enter',
      event_id: 'evt_bench',
      occurred_at: '2026-03-10T12:34:56.789Z',
      geofence: { id: 'geo-1', name: 'Depot', metadata: { items: items400 } },
      device: { id: 'dev-1', name: 'Truck 7', external_id: null, user_id: null, metadata: bulky },
      point: { lat: 52.52, lng: 13.405 },
      metadata,
      workflow: { id: 'wf-1', name: 'Bench' },
      payload_json: JSON.stringify({ metadata: { items: items400 } }),
      test: false,
    }),
  ) as TemplateContext;
}

interface Case {
  name: string;
  template: string;
  escaping?: Escaping;
}

const deepPath = `metadata.deep${'.a'.repeat(15)}`;
const CASES: Case[] = [
  {
    name: 'three levels over 400 items (the report)',
    template: nest(3, 'metadata.items', '{{name}} {{n}}, '),
  },
  { name: 'four levels over 400 items', template: nest(4, 'metadata.items', '{{name}} {{n}}, ') },
  { name: '10,000 iterations, one unknown name each', template: nest(1, 'metadata.big', '{{x}}') },
  { name: '10,000 iterations, one byte each', template: nest(1, 'metadata.big', '.') },
  {
    name: 'unknown names filling the template, in a 10,000-item loop',
    template: fill('{{#metadata.big}}', '{{x}}', '{{/metadata.big}}'),
  },
  {
    name: 'comments filling the template, in a 10,000-item loop',
    template: fill('{{#metadata.big}}', '{{!}}', '{{/metadata.big}}'),
  },
  {
    name: 'sections over missing names filling a 10,000-item loop',
    template: fill('{{#metadata.big}}', '{{#x}}{{/x}}', '{{/metadata.big}}'),
  },
  {
    name: 'inverted sections filling a 10,000-item loop',
    template: fill('{{#metadata.big}}', '{{^x}}{{/x}}', '{{/metadata.big}}'),
  },
  {
    name: '16-level dotted names filling a 10,000-item loop',
    template: fill('{{#metadata.big}}', `{{${deepPath}}}`, '{{/metadata.big}}'),
  },
  {
    name: 'unknown names looked up through 1,000 nested sections',
    template: fill('{{#point}}'.repeat(1000), '{{x}}', '{{/point}}'.repeat(1000)),
  },
  {
    name: 'deepest nesting (2,498 levels, one-character delimiters)',
    template: `{{=| |=}}${'|#.|'.repeat(2498)}x${'|/.|'.repeat(2498)}`,
  },
  {
    name: 'empty objects (2 bytes of JSON each) filling a 10,000-item loop',
    template: fill('{{#metadata.big}}', '{{metadata.empty}}', '{{/metadata.big}}'),
  },
  {
    name: 'numbers (the item) filling a 10,000-item loop',
    template: fill('{{#metadata.big}}', '{{.}}', '{{/metadata.big}}'),
  },
  { name: 'one 10 KB value, repeated past 64 KiB', template: nest(1, 'metadata.big', '{{payload_json}}') },
  { name: '1 MB object as one value', template: '{{device.metadata}}' },
  {
    name: 'Slack escaping of 10,000 ampersands (50 KB)',
    template: '{{metadata.ampersands}}',
    escaping: 'slack',
  },
  { name: 'multi-byte output (3-byte characters)', template: nest(1, 'metadata.items', '{{metadata.euro}}') },
  { name: 'text only, every line standalone-looking', template: fill('', '  {{! c }}  \n') },
  { name: 'plain text of the maximum length', template: fill('', 'Text with spaces.\n') },
];

function outcome(render: () => string): string {
  try {
    return `${Buffer.byteLength(render())} bytes`;
  } catch (error) {
    if (error instanceof TemplateBudgetError) return `stopped: ${error.bound}`;
    throw error;
  }
}

interface Timing {
  /** Median wall time of one render, ms. */
  median: number;
  /** Slowest wall time of one render, ms (includes the machine's other work). */
  max: number;
  /**
   * CPU time of this thread per render, ms: the median of 5 samples of enough renders to take
   * 50 ms each (the thread's CPU clock is too coarse for one render). What the render itself
   * costs the event loop, without the time spent waiting for a core on a busy machine.
   */
  cpu: number;
}

function once(action: () => unknown): void {
  try {
    action();
  } catch (error) {
    if (!(error instanceof TemplateBudgetError)) throw error;
  }
}

const median = (list: number[]) => list.sort((a, b) => a - b)[Math.floor(list.length / 2)] ?? 0;

/** One warm-up round (the first render of a shape also compiles it), then the timed ones. */
function time(action: () => unknown, rounds: number): Timing {
  once(action);
  const wall: number[] = [];
  for (let i = 0; i < rounds; i += 1) {
    const started = performance.now();
    once(action);
    wall.push(performance.now() - started);
  }
  const repeat = Math.max(1, Math.ceil(50 / Math.max(median([...wall]), 0.001)));
  const cpu: number[] = [];
  for (let sample = 0; sample < 5; sample += 1) {
    const start = process.threadCpuUsage();
    for (let i = 0; i < repeat; i += 1) once(action);
    const used = process.threadCpuUsage(start);
    cpu.push((used.user + used.system) / 1000 / repeat);
  }
  return { median: median(wall), max: Math.max(...wall), cpu: median(cpu) };
}

const data = context();
const results: { name: string; length: number; ended: string; parse: Timing; render: Timing }[] = [];
for (const { name, template, escaping = 'text' } of CASES) {
  const problem = templateProblem(template);
  if (problem !== null) throw new Error(`${name}: ${problem}`);
  const render = () => renderTemplate(template, data, escaping);
  const ended = outcome(render);
  const parse = time(() => templateProblem(template), ROUNDS);
  const rendered = time(render, ROUNDS);
  results.push({ name, length: template.length, ended, parse, render: rendered });
  console.log(
    `${name.padEnd(64)} ${String(template.length).padStart(6)} chars  ${ended.padEnd(20)}` +
      `parse ${parse.cpu.toFixed(2)} ms  render ${rendered.cpu.toFixed(2)} ms CPU, ` +
      `${rendered.median.toFixed(2)} ms wall (slowest ${rendered.max.toFixed(2)})`,
  );
}
// What every attempt does before rendering: parse its run's stored context (here ~1.4 MB).
const stored = JSON.stringify(data);
const parseContext = time(() => JSON.parse(stored), ROUNDS);
console.log(
  `${'(for scale) JSON.parse of this context, as each attempt does'.padEnd(64)} ${String(stored.length).padStart(6)} bytes ` +
    `${parseContext.cpu.toFixed(2)} ms CPU`,
);
const worst = (pick: (t: Timing) => number) => Math.max(...results.map((r) => pick(r.render)));
console.log(
  `worst render: median ${worst((t) => t.cpu).toFixed(2)} ms CPU, ${worst((t) => t.median).toFixed(2)} ms wall`,
);
console.log(JSON.stringify({ rounds: ROUNDS, results, parseContext }));
