/**
 * `If-Match` parsing (entity-tags.ts), property-based: any header text gives a precondition or
 * `malformed`, never an exception; a list of entity tags matches exactly the versions written as
 * strong tags of ours (weak tags, other opaque texts and versions out of range match none); `*`
 * anywhere matches any version; an element that is not `*` or a quoted tag makes it `malformed`.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { entityTag, ifMatchPrecondition } from '../../src/http/entity-tags.ts';
import { satisfies, type VersionPrecondition } from '../../src/shared/version-precondition.ts';

const version = fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER });

type Tag = { text: string; matches: number | undefined };
const tag: fc.Arbitrary<Tag> = fc.oneof(
  version.map((v) => ({ text: entityTag(v), matches: v })),
  version.map((v) => ({ text: `W/${entityTag(v)}`, matches: undefined })),
  fc
    .string({ maxLength: 12, unit: fc.constantFrom(...'abcXYZ-_.~!#$%&()+') })
    .map((s) => ({ text: `"x${s}"`, matches: undefined })),
  fc
    .constantFrom('"0"', '"01"', '"-1"', '"1.5"', '""', '"99999999999999999"', '"9007199254740993"')
    .map((text) => ({ text, matches: undefined })),
);
const separator = fc.constantFrom(',', ', ', ' ,  ', ' , , ');

function parsed(header: string): VersionPrecondition {
  const precondition = ifMatchPrecondition(header);
  assert.ok(precondition !== undefined && precondition !== 'malformed', `${header} parses`);
  return precondition;
}

test('any header text gives a precondition or `malformed`, without throwing', () => {
  fc.assert(
    fc.property(fc.string({ unit: 'binary', maxLength: 200 }), version, (header, v) => {
      const precondition = ifMatchPrecondition(header);
      assert.ok(precondition !== undefined);
      if (precondition !== 'malformed') assert.equal(typeof satisfies(precondition, v), 'boolean');
    }),
  );
});

test('a list of tags matches the versions of its strong tags, and only those', () => {
  fc.assert(
    fc.property(fc.array(tag, { minLength: 1, maxLength: 6 }), separator, version, (tags, sep, probe) => {
      const precondition = parsed(tags.map((t) => t.text).join(sep));
      const listed = new Set(tags.flatMap((t) => (t.matches === undefined ? [] : [t.matches])));
      for (const v of [...listed, probe])
        assert.equal(satisfies(precondition, v), listed.has(v), `version ${v}`);
    }),
  );
});

test('`*` among the tags matches any version; no header means no precondition', () => {
  fc.assert(
    fc.property(fc.array(tag, { maxLength: 4 }), version, (tags, v) => {
      assert.ok(satisfies(parsed([...tags.map((t) => t.text), '*'].join(', ')), v));
    }),
  );
  assert.equal(ifMatchPrecondition(undefined), undefined);
});

test('an element that is not `*` or a quoted tag makes the header malformed', () => {
  const notATag = fc.constantFrom('3', 'W/3', '"3', '3"', "'3'", '**', 'W/*', '"a"b"', '"tab\there"');
  fc.assert(
    fc.property(fc.array(tag, { maxLength: 4 }), notATag, fc.nat(4), (tags, bad, at) => {
      const texts = tags.map((t) => t.text);
      texts.splice(Math.min(at, texts.length), 0, bad);
      assert.equal(ifMatchPrecondition(texts.join(', ')), 'malformed');
    }),
  );
  for (const empty of ['', ' ', ',', ' , , ']) assert.equal(ifMatchPrecondition(empty), 'malformed');
});
