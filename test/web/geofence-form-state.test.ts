/**
 * The geofence form's decisions (web/src/pages/geofences/geofenceFormState.ts and
 * geofenceFormErrors.ts) without a browser: which rules a save sends, the order of the checks
 * before a save, the ring drawn for the exit buffer, and where the server's errors land.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { components } from '../../web/src/api/schema.ts';
import {
  fieldIssuesOf,
  geometryErrorOf,
  summaryOfUnplaced,
} from '../../web/src/pages/geofences/geofenceFormErrors.ts';
import {
  BAD_NUMBER,
  bufferToDraw,
  checkBeforeSave,
  parseMetadata,
  rulesToSend,
  ruleTexts,
  savedFields,
} from '../../web/src/pages/geofences/geofenceFormState.ts';

type Geofence = components['schemas']['Geofence'];

const saved = {
  id: 'gf_1',
  name: 'Depot',
  dwell_seconds: 300,
  exit_buffer_m: null,
  max_accuracy_m: 50,
} as unknown as Geofence;

describe('rules a save sends', () => {
  test('a new geofence sends the rules that are set, and no others', () => {
    const rules = { dwell_seconds: '120', exit_buffer_m: '', max_accuracy_m: ' ' };
    assert.deepEqual(rulesToSend(null, rules), { dwell_seconds: 120 });
  });

  test('an edit sends only the rules changed since it was loaded, a cleared one as null', () => {
    const rules = { ...ruleTexts(saved), exit_buffer_m: '25', max_accuracy_m: '' };
    assert.deepEqual(rulesToSend(saved, rules), { exit_buffer_m: 25, max_accuracy_m: null });
    assert.deepEqual(rulesToSend(saved, ruleTexts(saved)), {});
  });

  test('empty optional texts are sent as null, the metadata as given', () => {
    const fields = savedFields(null, {
      name: 'Yard',
      description: '  ',
      externalId: 'yard-1',
      metadata: { region: 'north' },
      rules: ruleTexts(null),
    });
    assert.deepEqual(fields, {
      name: 'Yard',
      description: null,
      external_id: 'yard-1',
      metadata: { region: 'north' },
    });
  });
});

describe('checks before a save', () => {
  const polygon = '{"type": "Polygon", "coordinates": []}';

  test('a rule holding text that is not a number comes first, at its field', () => {
    const checked = checkBeforeSave(['dwell_seconds'], { problem: 'bad metadata' }, '');
    assert.ok('formError' in checked);
    assert.deepEqual(checked.fieldErrors, { dwell_seconds: BAD_NUMBER });
  });

  test('then metadata that is not an object, then a missing geometry', () => {
    const array = checkBeforeSave([], parseMetadata('[1]'), polygon);
    assert.ok('formError' in array);
    assert.match(array.formError, /must be a JSON object/);
    const broken = checkBeforeSave([], parseMetadata('{"a":'), polygon);
    assert.ok('formError' in broken);
    assert.match(broken.formError, /^Metadata is not valid JSON: /);
    const empty = checkBeforeSave([], parseMetadata(''), '  ');
    assert.ok('formError' in empty);
    assert.ok(empty.fieldErrors.geometry);
  });

  test('passing every check gives the metadata to send', () => {
    assert.deepEqual(checkBeforeSave([], parseMetadata('{"region": "north"}'), polygon), {
      metadata: { region: 'north' },
    });
  });
});

test('the exit-buffer ring follows the field: none when empty or no length, out of range still drawn', () => {
  assert.equal(bufferToDraw(''), null);
  assert.equal(bufferToDraw('0'), null);
  assert.equal(bufferToDraw('-5'), null);
  assert.equal(bufferToDraw('25.5'), 25.5);
  assert.equal(bufferToDraw('5000'), 5000);
});

describe('server errors', () => {
  test('INVALID_GEOMETRY names the reason and the place at the geometry field', () => {
    const found = geometryErrorOf({
      error_code: 'INVALID_GEOMETRY',
      detail: 'Invalid geometry',
      details: { reason: 'self-intersection', location: [13.123456789, 52.5] },
    });
    assert.deepEqual(found, {
      field: 'Invalid geometry (self-intersection at 13.1234568, 52.5)',
      detail: 'Invalid geometry',
      location: [13.123456789, 52.5],
    });
    assert.equal(geometryErrorOf({ error_code: 'DUPLICATE_RESOURCE', detail: 'taken' }), null);
  });

  test("a 422's issues land at their fields; those of no field are left for the summary", () => {
    const found = fieldIssuesOf(422, {
      detail: [
        { loc: ['body', 'dwell_seconds'], msg: 'must be >= 60' },
        { loc: ['body', 'metadata', 'region'], msg: 'too long' },
        { loc: ['body', 'metadata', 'zone'], msg: 'too long' },
        { loc: ['query', 'x'], msg: 'unknown' },
      ],
    });
    assert.deepEqual(found?.fieldErrors, {
      dwell_seconds: 'must be >= 60',
      metadata: 'region: too long; zone: too long',
    });
    assert.deepEqual(found?.unplaced, [{ loc: ['query', 'x'], msg: 'unknown' }]);
    assert.equal(fieldIssuesOf(400, { detail: [] }), null);
    assert.equal(summaryOfUnplaced(['a', 'b']), 'a; b');
    assert.match(summaryOfUnplaced([]), /see the messages below/);
  });
});
