/**
 * The template parser (`template-parser.ts`) is Mustache's parser with a linear scanner: on any
 * template it gives exactly the tokens `new Mustache.Writer().parse()` gives, or throws the same
 * error, and templates of the longest accepted length that made Mustache's own scanner backtrack
 * or search the whole remainder at every tag parse in a bounded number of steps.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import Mustache from 'mustache';
import { parseTemplate } from '../../src/workflows/template-parser.ts';

type Parsed = { tokens: unknown } | { error: string };

function parsed(parse: () => unknown): Parsed {
  try {
    return { tokens: parse() };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

const ours = (template: string) => parsed(() => parseTemplate(template));
const mustaches = (template: string) => parsed(() => new Mustache.Writer().parse(template));

/** Pieces that exercise every rule of the parser: tags, delimiters, whitespace, standalone lines. */
const piece = fc.oneof(
  fc.constantFrom(
    ' ',
    '  ',
    '\t',
    '\n',
    '\r\n',
    '\u00a0',
    '\u2028',
    'x',
    'text',
    '€',
    '😀',
    '{',
    '}',
    '{{',
    '}}',
    '{{{',
    '}}}',
    '=',
    '#',
    '/',
    '<%',
    '%>',
    '|',
    '[',
    ']',
  ),
  fc
    .constantFrom('a', 'b', 'a.b', '.', ' a ', '', 'x y')
    .chain((name) =>
      fc.constantFrom(
        `{{${name}}}`,
        `{{#${name}}}`,
        `{{^${name}}}`,
        `{{/${name}}}`,
        `{{{${name}}}}`,
        `{{& ${name}}}`,
        `{{> ${name}}}`,
        `{{! ${name} }}`,
        `<%${name}%>`,
        `<%#${name}%>`,
        `<%/${name}%>`,
        `|${name}|`,
        `|#${name}|`,
        `|/${name}|`,
        `[{${name}}]`,
      ),
    ),
  fc.constantFrom(
    '{{=<% %>=}}',
    '{{= | | =}}',
    '{{=[ ]=}}',
    '<%={{ }}=%>',
    '|={{ }}=|',
    '[={{ }}=]',
    '{{=x=}}',
    '{{==}}',
    '{{=a  b  c=}}',
  ),
);

const template = fc.array(piece, { maxLength: 24 }).map((pieces) => pieces.join(''));

describe('parseTemplate', () => {
  test('gives Mustache’s tokens, or its error, for any template', () => {
    fc.assert(
      fc.property(template, (text) => {
        assert.deepStrictEqual(ours(text), mustaches(text));
      }),
      { numRuns: 3000 },
    );
  });

  test('gives Mustache’s tokens for arbitrary text with tag characters', () => {
    const chars = fc.string({
      unit: fc.constantFrom('{', '}', '#', '^', '/', '&', '=', '!', '>', ' ', '\n', 'a', '.', '%', '<'),
      maxLength: 40,
    });
    fc.assert(
      fc.property(chars, (text) => {
        assert.deepStrictEqual(ours(text), mustaches(text));
      }),
      { numRuns: 3000 },
    );
  });

  test('examples: standalone lines, partial indentation and errors match Mustache', () => {
    for (const text of [
      '  {{#a}}  \n  x\n  {{/a}}\n',
      '  {{> p}}\n',
      'a {{> p}} b\n',
      '{{=<% %>=}}\n<%#a%>\n<%/a%>\n',
      '{{a',
      '{{#a}}',
      '{{/a}}',
      '{{#a}}{{/b}}',
      '{{=x=}}',
      '{{{a}}',
    ]) {
      assert.deepStrictEqual(ours(text), mustaches(text), JSON.stringify(text));
    }
  });
});

describe('parse cost', () => {
  // Each took Mustache's own scanner 0.2–0.5 s (20,000 characters, a backtracking search over a
  // run of whitespace inside a tag); here each parse is one pass. The assertion is on the
  // result, not on time: the bench (bench/templates.ts) has the figures.
  test('long whitespace inside a tag parses, or fails, like Mustache', () => {
    for (const text of [
      `{{a${' '.repeat(19_990)}x}}`,
      `{{a${' '.repeat(19_990)}x`,
      `{{{a${' '.repeat(19_990)}x}}`,
      `{{=${' '.repeat(19_990)}x`,
    ]) {
      assert.deepStrictEqual(ours(text), mustaches(text));
    }
  });
});
