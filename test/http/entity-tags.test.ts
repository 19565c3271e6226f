/**
 * `If-Match` parsing (entity-tags.ts), property-based: any header text gives a precondition and
 * never throws; a list of tags matches exactly the versions written as strong tags of ours (weak
 * tags, other texts and versions out of range match none), and `*` anywhere matches any version.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { entityTag, ifMatchPrecondition } from '../../src/http/entity-tags.ts';
import { satisfies } from '../../src/shared/version-precondition.ts';

const version = fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER });

type Tag = { text: string; matches: number | undefined };
const tag: fc.Arbitrary<Tag> = fc.oneof(
  version.map((v) => ({ text: entityTag(v), matches: v })),
  version.map((v) => ({ text: `W/${entityTag(v)}`, matches: undefined })),
  fc.string({ maxLength: 12 }).map((s) => ({ text: `"x${s.replace(/[",]/g, '')}"`, matches: undefined })),
  fc.constantFrom('"0"', '"01"', '"-1"', '"1.5"', '3', '""', '"99999999999999999"', '"9007199254740993"').map((text) => ({
    text,
    matches: undefined,
  })),
);

test('any header text gives a precondition, without throwing', () => {
  fc.assert(
    fc.property(fc.string({ unit: 'binary', maxLength: 200 }), version, (header, v) => {
      const precondition = ifMatchPrecondition(header);
      assert.ok(precondition);
      assert.equal(typeof satisfies(precondition, v), 'boolean');
    }),
  );
});

test('a list of tags matches the versions of its strong tags, and only those', () => {
  fc.assert(
    fc.property(
      fc.array(tag, { minLength: 1, maxLength: 6 }),
      fc.constantFrom(',', ', ', ' ,  '),
      version,
      (tags, sep, probe) => {
        const precondition = ifMatchPrecondition(tags.map((t) => t.text).join(sep));
        assert.ok(precondition);
        const listed = new Set(tags.flatMap((t) => (t.matches === undefined ? [] : [t.matches])));
        for (const v of [...listed, probe])
          assert.equal(satisfies(precondition, v), listed.has(v), `version ${v}`);
      },
    ),
  );
});

test('`*` among the tags matches any version; no header means no precondition', () => {
  fc.assert(
    fc.property(fc.array(tag, { maxLength: 4 }), version, (tags, v) => {
      const precondition = ifMatchPrecondition([...tags.map((t) => t.text), '*'].join(', '));
      assert.ok(precondition && satisfies(precondition, v));
    }),
  );
  assert.equal(ifMatchPrecondition(undefined), undefined);
});
