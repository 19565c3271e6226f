/**
 * Rendering is bounded (contract §6, ADR 014): at most 64 KiB of output (UTF-8, after the
 * target's escaping), at most 10,000 section iterations, and an internal number of steps. A
 * render that passes a bound stops there and throws `TemplateBudgetError` naming the bound.
 *
 * "Stops there" is shown by counting, not by timing: the lists and objects below are proxies that
 * count how often the renderer reads them, so a render that went on after a bound (as Mustache's
 * own renderer does: 64 million iterations for the reported template) shows in the count. The
 * properties check that, within the bounds, rendering is exactly Mustache's.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import Mustache from 'mustache';
import {
  MAX_TEMPLATE_OUTPUT_BYTES,
  MAX_TEMPLATE_SECTION_ITERATIONS,
  MAX_TEMPLATE_STEPS,
  TemplateBudgetError,
  utf8Length,
} from '../../src/workflows/template-budget.ts';
import { DataContext } from '../../src/workflows/template-context.ts';
import {
  ESCAPES,
  type Escaping,
  renderTemplate,
  type TemplateContext,
  templateProblem,
} from '../../src/workflows/templates.ts';

const OUTPUT_MESSAGE = 'Template output exceeds 65536 bytes (64 KiB)';
const ITERATIONS_MESSAGE = 'Template exceeds 10000 section iterations';
const STEPS_MESSAGE = 'Template exceeds 100000 rendering steps (tags visited and names looked up)';

function contextWith(metadata: Record<string, unknown>, overrides: Partial<TemplateContext> = {}) {
  return {
    event: 'geofence.enter',
    event_type: 'enter',
    event_id: 'evt_1',
    occurred_at: '2026-03-10T12:34:56.789Z',
    geofence: { id: 'geo-1', name: 'Depot', metadata: {} },
    device: { id: 'dev-1', name: 'Truck 7', external_id: null, user_id: null, metadata: {} },
    point: { lat: 52.52, lng: 13.405 },
    metadata,
    workflow: { id: 'wf-1', name: 'Alerts' },
    payload_json: '{}',
    test: false,
    ...overrides,
  } satisfies TemplateContext;
}

/** `list` behind a proxy that counts the items read (`reads.count`). */
function counted<T>(list: T[]): { list: T[]; reads: { count: number } } {
  const reads = { count: 0 };
  const proxy = new Proxy(list, {
    get(target, key, receiver) {
      if (typeof key === 'string' && /^\d+$/.test(key)) reads.count += 1;
      return Reflect.get(target, key, receiver);
    },
  });
  return { list: proxy, reads };
}

function budgetError(render: () => unknown): TemplateBudgetError {
  try {
    render();
  } catch (error) {
    if (error instanceof TemplateBudgetError) return error;
    throw error;
  }
  assert.fail('the render finished: no bound was passed');
}

const nest = (depth: number, name: string, inner: string) =>
  `{{#${name}}}`.repeat(depth) + inner + `{{/${name}}}`.repeat(depth);

const items = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `item ${i}`, n: i }));

describe('the reported template', () => {
  // An e-mail body nesting three sections over a 400-item metadata array: 64 million iterations
  // (13 s on the event loop); a fourth level would take about an hour.
  const reported = nest(3, 'metadata.items', '{{name}} near {{device.name}}. ');

  test('is accepted on save (the bound applies to rendering) and fails at the output bound', () => {
    assert.ok(reported.length <= 145, `${reported.length} characters`);
    assert.equal(templateProblem(reported), null);
    const { list, reads } = counted(items(400));
    const error = budgetError(() => renderTemplate(reported, contextWith({ items: list }), 'text'));
    assert.equal(error.message, OUTPUT_MESSAGE);
    assert.equal(error.bound, 'output');
    // 65,536 bytes of ~25-byte lines: the render read about 2,600 items of 64 million.
    assert.ok(reads.count < 3_000, `${reads.count} items read`);
  });

  test('with a smaller body it fails at the iteration bound, having read 10,001 items', () => {
    const { list, reads } = counted(items(400));
    const error = budgetError(() =>
      renderTemplate(nest(3, 'metadata.items', '.'), contextWith({ items: list }), 'text'),
    );
    assert.equal(error.message, ITERATIONS_MESSAGE);
    assert.equal(error.bound, 'iterations');
    assert.ok(reads.count <= MAX_TEMPLATE_SECTION_ITERATIONS + 1, `${reads.count} items read`);
  });

  test('four levels fail the same way, as early', () => {
    const { list, reads } = counted(items(400));
    const error = budgetError(() =>
      renderTemplate(nest(4, 'metadata.items', '{{n}}'), contextWith({ items: list }), 'slack'),
    );
    assert.equal(error.message, ITERATIONS_MESSAGE);
    assert.ok(reads.count <= MAX_TEMPLATE_SECTION_ITERATIONS + 1, `${reads.count} items read`);
  });
});

describe('section iterations', () => {
  const render = (template: string, metadata: Record<string, unknown>, test = false) =>
    renderTemplate(template, contextWith(metadata, { test }), 'text');

  test('exactly 10,000 pass; 10,001 fail', () => {
    const template = '{{#metadata.list}}.{{/metadata.list}}';
    assert.equal(render(template, { list: new Array(10_000).fill(1) }), '.'.repeat(10_000));
    const error = budgetError(() => render(template, { list: new Array(10_001).fill(1) }));
    assert.equal(error.message, ITERATIONS_MESSAGE);
  });

  test('nested sections count every body rendered: 100 outer + 100 × 99 inner = 10,000', () => {
    const template = '{{#metadata.outer}}{{#metadata.inner}}.{{/metadata.inner}}{{/metadata.outer}}';
    const inner = new Array(99).fill(1);
    assert.equal(render(template, { outer: new Array(100).fill(1), inner }).length, 9_900);
    const error = budgetError(() => render(template, { outer: new Array(101).fill(1), inner }));
    assert.equal(error.message, ITERATIONS_MESSAGE);
  });

  test('a truthy value and an inverted section rendered count one each', () => {
    const list = { list: new Array(9_998).fill(1) };
    const template =
      '{{#test}}t{{/test}}{{^metadata.none}}n{{/metadata.none}}{{#metadata.list}}.{{/metadata.list}}';
    assert.equal(render(template, list, true).length, 2 + 9_998);
    const error = budgetError(() =>
      render(`${template}{{#metadata.flag}}!{{/metadata.flag}}`, { ...list, flag: { on: true } }, true),
    );
    assert.equal(error.message, ITERATIONS_MESSAGE);
    // Sections not rendered (falsy, empty lists, inverted over a truthy value) cost no iteration.
    const skipped =
      '{{#test}}x{{/test}}{{#metadata.empty}}x{{/metadata.empty}}{{^metadata.list}}x{{/metadata.list}}';
    assert.equal(
      render(`${skipped}${'{{#metadata.list}}.{{/metadata.list}}'}`, { ...list, empty: [] }),
      '.'.repeat(9_998),
    );
  });
});

describe('output bytes', () => {
  const render = (value: string, escaping: Escaping = 'text') =>
    renderTemplate('{{metadata.value}}', contextWith({ value }), escaping);

  test('exactly 65,536 bytes pass; one more byte fails', () => {
    assert.equal(render('a'.repeat(65_536)).length, 65_536);
    assert.equal(budgetError(() => render('a'.repeat(65_537))).message, OUTPUT_MESSAGE);
  });

  test('bytes are UTF-8: 2-, 3- and 4-byte characters count as such', () => {
    for (const [char, bytes] of [
      ['é', 2],
      ['€', 3],
      ['😀', 4],
    ] as const) {
      const fits = char.repeat(Math.floor(MAX_TEMPLATE_OUTPUT_BYTES / bytes));
      const filled = fits + 'a'.repeat(MAX_TEMPLATE_OUTPUT_BYTES - utf8Length(fits));
      assert.equal(utf8Length(filled), MAX_TEMPLATE_OUTPUT_BYTES);
      assert.equal(render(filled), filled, char);
      assert.equal(budgetError(() => render(`${filled}a`)).message, OUTPUT_MESSAGE, char);
      // One character too many: in code units far below the bound, in bytes above it.
      assert.equal(budgetError(() => render(`${fits}${char}`)).message, OUTPUT_MESSAGE, char);
    }
  });

  test('Slack escaping counts the escaped size: & is 5 bytes once escaped', () => {
    const fits = '&'.repeat(13_106); // 13,106 × "&amp;" = 65,530 bytes
    assert.equal(render(fits, 'slack').length, 65_530);
    assert.equal(render(`${fits}<`, 'slack').length, 65_534);
    assert.equal(budgetError(() => render(`${fits}&&`, 'slack')).message, OUTPUT_MESSAGE);
    // The same text is far within the bound where it is not escaped.
    assert.equal(render(`${fits}&&`, 'text').length, 13_108);
  });

  test('text, values and sections all count, and the render stops at the first byte too many', () => {
    const { list, reads } = counted(new Array(100_000).fill('abcdefghij'));
    const error = budgetError(() =>
      renderTemplate('x{{#metadata.list}}[{{.}}]{{/metadata.list}}', contextWith({ list }), 'text'),
    );
    assert.equal(error.message, OUTPUT_MESSAGE);
    // 1 + 12 bytes per item: 5,461 items fit (65,533 bytes); the 5,462nd does not, and is the last read.
    assert.equal(reads.count, 5_462);
  });

  test('a large object is refused without being serialised whole', () => {
    let reads = 0;
    const huge = new Proxy(Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`k${i}`, i])), {
      get(target, key, receiver) {
        reads += 1;
        return Reflect.get(target, key, receiver);
      },
    });
    const error = budgetError(() => renderTemplate('{{metadata.huge}}', contextWith({ huge }), 'text'));
    assert.equal(error.message, OUTPUT_MESSAGE);
    assert.ok(reads < 10_000, `${reads} properties read of 100,000`);
  });
});

describe('steps', () => {
  test('tags that render nothing are still work: a loop full of them stops at the step bound', () => {
    const body = '{{nothing}}'.repeat(1_800); // within the longest template (20,000 characters)
    const template = `{{#metadata.list}}${body}{{/metadata.list}}`;
    assert.ok(template.length <= 20_000);
    const { list, reads } = counted(new Array(10_000).fill(0));
    const error = budgetError(() => renderTemplate(template, contextWith({ list }), 'text'));
    assert.equal(error.message, STEPS_MESSAGE);
    assert.equal(error.bound, 'steps');
    // Each empty tag costs a step and a lookup in two contexts: the bound falls in item 19.
    assert.ok(reads.count <= Math.ceil(MAX_TEMPLATE_STEPS / (3 * 1_800)) + 1, `${reads.count} items`);
  });

  test('a lookup costs the properties it examines: through 1,000 nested sections', () => {
    const template = `${'{{#point}}'.repeat(1_000)}${'{{x}}'.repeat(100)}${'{{/point}}'.repeat(1_000)}`;
    assert.equal(budgetError(() => renderTemplate(template, contextWith({}), 'text')).message, STEPS_MESSAGE);
  });

  test('a template of ordinary size over a long list stays far within the step bound', () => {
    const template =
      '{{#metadata.stops}}{{name}} ({{device.name}}){{^last}}, {{/last}}{{/metadata.stops}} for {{device.name}}';
    const stops = Array.from({ length: 2_000 }, (_, i) => ({ name: `S${i}`, last: i === 1_999 }));
    const text = renderTemplate(template, contextWith({ stops }), 'text');
    assert.ok(text.startsWith('S0 (Truck 7), S1 (Truck 7), '));
    assert.ok(text.endsWith('S1999 (Truck 7) for Truck 7'));
  });
});

describe('nesting', () => {
  test('sections nested as deep as the longest template allows render (no stack overflow)', () => {
    const template = `{{=| |=}}${'|#.|'.repeat(2_498)}x${'|/.|'.repeat(2_498)}`;
    assert.ok(template.length <= 20_000);
    assert.equal(templateProblem(template), null);
    assert.equal(renderTemplate(template, contextWith({}), 'text'), 'x');
  });
});

// --- properties -------------------------------------------------------------------------------

/** Mustache's own writer, with the same lookup and the target's escaping on every tag form. */
class PlainWriter extends Mustache.Writer {
  private readonly config: Mustache.RenderOptions;

  constructor(escaping: Escaping) {
    super();
    const text = (value: unknown) =>
      value === null || value === undefined
        ? ''
        : typeof value === 'object'
          ? JSON.stringify(value)
          : String(value);
    this.config = { escape: (value: unknown) => ESCAPES[escaping](text(value)) };
  }

  renderPlain(template: string, context: TemplateContext): string {
    return this.render(template, new DataContext(context), undefined, this.config);
  }

  override unescapedValue(token: string[], context: Mustache.Context): string {
    return this.escapedValue(token, context, this.config);
  }
}

const plain = (template: string, context: TemplateContext, escaping: Escaping) =>
  new PlainWriter(escaping).renderPlain(template, context);

type Outcome = { text: string } | { bound: string };

function bounded(template: string, context: TemplateContext, escaping: Escaping): Outcome {
  try {
    return { text: renderTemplate(template, context, escaping) };
  } catch (error) {
    if (error instanceof TemplateBudgetError) return { bound: error.bound };
    throw error;
  }
}

const text = fc.string({
  unit: fc.oneof(
    fc.constantFrom('a', ' ', '\n', '&', '<', '>', '"', 'é', '€', '😀', '.'),
    fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
  ),
  maxLength: 12,
});

const NAMES = ['list', 'other', 'name', 'flag', 'big', 'nested', 'missing', 'nested.list', 'nested.name'];
const name = fc.oneof(
  fc.constantFrom('.', ...NAMES.map((n) => `metadata.${n}`), ...NAMES, 'device.name', 'test'),
);

const listName = fc.constantFrom('metadata.list', 'metadata.other', 'metadata.nested.list');

const { template: randomTemplate } = fc.letrec<{ template: string; piece: string }>((tie) => ({
  template: fc.array(tie('piece'), { maxLength: 5 }).map((pieces) => pieces.join('')),
  piece: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    text.map((t) => t.replaceAll('{', '(').replaceAll('}', ')')),
    name.map((n) => `{{${n}}}`),
    name.map((n) => `{{{${n}}}}`),
    fc
      .tuple(fc.constantFrom('#', '^'), name, tie('template'))
      .map(([kind, n, inner]) => `{{${kind}${n}}}${inner}{{/${n}}}`),
    // Two lists nested: up to 14,400 iterations.
    fc
      .tuple(listName, listName, tie('template'))
      .map(([outer, inner, body]) => `{{#${outer}}}{{#${inner}}}${body}{{/${inner}}}{{/${outer}}}`),
    fc.constant('{{! note }}'),
    // A standalone section: its lines leave no whitespace.
    tie('template').map((inner) => `\n  {{#metadata.flag}}  \n${inner}\n  {{/metadata.flag}}\n`),
  ),
}));

/** Lists long enough that two nested sections pass 10,000 iterations; values up to 120 KB. */
const randomMetadata = fc.record({
  list: fc.array(fc.oneof(fc.integer(), text, fc.record({ name: text })), { maxLength: 120, size: 'max' }),
  other: fc.array(fc.constantFrom(0, 1, '', 'x', null, true), { maxLength: 120, size: 'max' }),
  name: text,
  flag: fc.oneof(fc.boolean(), fc.constant(0), fc.constant('')),
  big: fc.tuple(fc.constantFrom('a', 'é', '&', '😀'), fc.nat({ max: 30_000 })).map(([c, n]) => c.repeat(n)),
  nested: fc.record({ list: fc.array(fc.nat(), { maxLength: 30 }), name: text }),
});

describe('properties', () => {
  test('within the bounds, rendering is exactly Mustache’s; beyond them, a TemplateBudgetError', () => {
    fc.assert(
      fc.property(
        randomTemplate,
        randomMetadata,
        fc.boolean(),
        fc.constantFrom<Escaping>('text', 'slack'),
        (template, metadata, isTest, escaping) => {
          fc.pre(templateProblem(template) === null);
          const context = contextWith(metadata, { test: isTest });
          const outcome = bounded(template, context, escaping);
          if ('text' in outcome) {
            assert.equal(outcome.text, plain(template, context, escaping));
            assert.ok(utf8Length(outcome.text) <= MAX_TEMPLATE_OUTPUT_BYTES);
          }
        },
      ),
      { numRuns: 400 },
    );
  });

  test('with few iterations, a render fails exactly when Mustache’s output passes 65,536 bytes', () => {
    const fewIterations = randomMetadata.map((m) => ({
      ...m,
      list: m.list.slice(0, 3),
      other: [],
      nested: { ...m.nested, list: m.nested.list.slice(0, 3) },
    }));
    fc.assert(
      fc.property(
        randomTemplate,
        fewIterations,
        fc.constantFrom<Escaping>('text', 'slack'),
        (template, metadata, escaping) => {
          fc.pre(templateProblem(template) === null);
          const context = contextWith(metadata);
          const expected = plain(template, context, escaping);
          const outcome = bounded(template, context, escaping);
          if (utf8Length(expected) <= MAX_TEMPLATE_OUTPUT_BYTES)
            assert.deepEqual(outcome, { text: expected });
          else assert.deepEqual(outcome, { bound: 'output' });
        },
      ),
      { numRuns: 400 },
    );
  });

  test('a JSON value renders as JSON.stringify writes it', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), (value) => {
        const outcome = bounded('{{metadata.v}}', contextWith({ v: value }), 'text');
        const expected =
          value === null ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value);
        assert.deepEqual(outcome, { text: expected });
      }),
      { numRuns: 500 },
    );
  });

  test('utf8Length is the length TextEncoder gives, lone surrogates included', () => {
    const encoder = new TextEncoder();
    fc.assert(
      fc.property(
        fc
          .array(fc.oneof(fc.constantFrom('\ud800', '\udc00'), fc.string({ unit: 'binary', maxLength: 3 })))
          .map((parts) => parts.join('')),
        (s) => {
          assert.equal(utf8Length(s), encoder.encode(s).length);
        },
      ),
      { numRuns: 1000 },
    );
  });
});
