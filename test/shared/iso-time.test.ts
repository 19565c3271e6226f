import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { isoText } from '../../src/shared/iso-time.ts';

const pad = (n: number, width: number) => String(n).padStart(width, '0');

/** Canonical-looking text whose fields may be out of range (day 31 of April, hour 24, minute 60…). */
const canonicalShaped = fc
  .record({
    year: fc.integer({ min: 0, max: 9999 }),
    month: fc.integer({ min: 0, max: 13 }),
    day: fc.integer({ min: 0, max: 32 }),
    hour: fc.integer({ min: 0, max: 25 }),
    minute: fc.integer({ min: 0, max: 61 }),
    second: fc.integer({ min: 0, max: 61 }),
    ms: fc.integer({ min: 0, max: 999 }),
  })
  .map(
    (f) =>
      `${pad(f.year, 4)}-${pad(f.month, 2)}-${pad(f.day, 2)}T${pad(f.hour, 2)}:${pad(f.minute, 2)}:${pad(f.second, 2)}.${pad(f.ms, 3)}Z`,
  );

/** Other forms Date accepts: offsets, no milliseconds, more digits, lower-case separators. */
const otherForms = fc
  .tuple(
    fc.date({ min: new Date('0001-01-01'), max: new Date('9999-12-31'), noInvalidDate: true }),
    fc.integer({ min: 0, max: 5 }),
  )
  .map(([date, form]) => {
    const iso = date.toISOString();
    switch (form) {
      case 0:
        return iso.replace('Z', '+00:00');
      case 1:
        return `${iso.slice(0, 19)}Z`;
      case 2:
        return iso.replace('Z', '000Z');
      case 3:
        return `${iso.slice(0, 19)}+02:30`;
      case 4:
        return iso.toLowerCase();
      default:
        return iso;
    }
  });

describe('isoText', () => {
  test('always equals toISOString of the parsed date', () => {
    fc.assert(
      fc.property(fc.oneof(canonicalShaped, otherForms), (text) => {
        const date = new Date(text);
        if (Number.isNaN(date.getTime())) return;
        assert.equal(isoText(text, date), date.toISOString(), text);
      }),
      { numRuns: 20_000 },
    );
  });

  test('gives back the text itself when it is canonical, and a new text when parsing rolled a field over', () => {
    const canonical = '2026-03-01T12:34:56.789Z';
    assert.equal(isoText(canonical, new Date(canonical)), canonical);
    assert.equal(
      isoText('2026-02-30T00:00:00.000Z', new Date('2026-02-30T00:00:00.000Z')),
      '2026-03-02T00:00:00.000Z',
    );
    assert.equal(
      isoText('2026-01-01T24:00:00.000Z', new Date('2026-01-01T24:00:00.000Z')),
      '2026-01-02T00:00:00.000Z',
    );
    assert.equal(
      isoText('2026-01-01T10:00:00+02:00', new Date('2026-01-01T10:00:00+02:00')),
      '2026-01-01T08:00:00.000Z',
    );
  });
});
