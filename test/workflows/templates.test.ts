/**
 * Workflow templates (contract §6, ADR 014): Mustache over the event's variables, escaping chosen
 * by the target and never by the template, validated when a workflow is saved. The properties
 * check what the examples cannot enumerate: no accepted template throws, no value reaches Slack
 * with a `<` or `>` of its own, and plain text keeps every value exactly.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { sampleEvent } from '../../src/workflows/sample-event.ts';
import {
  defaultMessage,
  defaultSubject,
  type Escaping,
  renderTemplate,
  type TemplateContext,
  templateProblem,
  unknownVariables,
} from '../../src/workflows/templates.ts';

const RUNS = 500;

function sampleContext(overrides: Partial<TemplateContext> = {}): TemplateContext {
  return {
    event: 'geofence.enter',
    event_type: 'enter',
    event_id: 'evt_0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b',
    occurred_at: '2026-03-10T12:34:56.789Z',
    geofence: { id: 'geo-1', name: 'Depot', metadata: { zone: 'north' } },
    device: {
      id: 'dev-1',
      name: 'Truck 7',
      external_id: 'T-7',
      user_id: null,
      metadata: { vehicle: { plate: 'B-XY 123', axles: 3 }, tags: ['cold', 'fragile'] },
    },
    point: { lat: 52.52, lng: 13.405 },
    metadata: { stops: [{ name: 'Gate A' }, { name: 'Gate B' }], driver: { name: 'Ana' } },
    workflow: { id: 'wf-1', name: 'Depot alerts' },
    payload_json: '{"event":"geofence.enter"}',
    test: false,
    ...overrides,
  };
}

const withDeviceName = (name: string) => {
  const context = sampleContext();
  return sampleContext({ device: { ...context.device, name } });
};

const unescapeSlack = (text: string) =>
  text.replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&amp;', '&');

describe('rendering', () => {
  test('documented variables render their values', () => {
    const rendered = renderTemplate(
      '{{device.name}} {{event_type}} {{geofence.name}} at {{point.lat}},{{point.lng}} ({{event}}, {{event_id}}, {{workflow.name}}, test={{test}})',
      sampleContext(),
      'text',
    );
    assert.equal(
      rendered,
      'Truck 7 enter Depot at 52.52,13.405 (geofence.enter, evt_0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b, Depot alerts, test=false)',
    );
  });

  test('an unknown variable renders empty, at any depth', () => {
    const rendered = renderTemplate(
      '[{{nope}}][{{device.nope}}][{{device.metadata.missing.deeper}}][{{device.user_id}}]',
      sampleContext(),
      'text',
    );
    assert.equal(rendered, '[][][][]');
  });

  test('nested metadata keys resolve; a number renders as digits and an object as JSON', () => {
    const context = sampleContext();
    assert.equal(renderTemplate('{{device.metadata.vehicle.plate}}', context, 'text'), 'B-XY 123');
    assert.equal(renderTemplate('{{device.metadata.vehicle.axles}}', context, 'text'), '3');
    assert.equal(renderTemplate('{{geofence.metadata.zone}}', context, 'text'), 'north');
    assert.equal(renderTemplate('{{metadata.driver.name}}', context, 'text'), 'Ana');
    assert.equal(renderTemplate('{{device.metadata.tags.1}}', context, 'text'), 'fragile');
    assert.equal(
      renderTemplate('{{device.metadata.vehicle}}', context, 'text'),
      '{"plate":"B-XY 123","axles":3}',
    );
  });

  test('sections iterate lists, enter objects, test flags; inverted sections cover what is absent', () => {
    const context = sampleContext();
    assert.equal(
      renderTemplate('{{#metadata.stops}}{{name}} for {{device.name}}; {{/metadata.stops}}', context, 'text'),
      'Gate A for Truck 7; Gate B for Truck 7; ',
    );
    assert.equal(
      renderTemplate(
        '{{#device.metadata.vehicle}}{{plate}}/{{axles}}{{/device.metadata.vehicle}}',
        context,
        'text',
      ),
      'B-XY 123/3',
    );
    assert.equal(
      renderTemplate('{{#device.metadata.tags}}<{{.}}>{{/device.metadata.tags}}', context, 'text'),
      '<cold><fragile>',
    );
    assert.equal(
      renderTemplate('{{^metadata.missing}}no {{/metadata.missing}}{{^test}}live{{/test}}', context, 'text'),
      'no live',
    );
    assert.equal(
      renderTemplate('{{#test}}[test] {{/test}}{{device.name}}', sampleContext({ test: true }), 'text'),
      '[test] Truck 7',
    );
  });

  test('names inherited from prototypes are not variables: they render empty and change nothing', () => {
    const context = sampleContext();
    const before = structuredClone(context);
    for (const template of [
      '{{metadata.constructor}}',
      '{{metadata.__proto__}}',
      '{{metadata.__defineGetter__}}',
      '{{metadata.toString}}',
      '{{#metadata.valueOf}}x{{/metadata.valueOf}}',
      '{{device.metadata.tags.map}}',
      '{{device.metadata.tags.push}}',
      '{{device.name.toString}}',
      '{{point.lat.toFixed}}',
      '{{constructor.constructor}}',
    ]) {
      assert.equal(renderTemplate(template, context, 'slack'), '', template);
    }
    assert.equal(renderTemplate('{{length}}', context, 'text'), '');
    assert.deepEqual(context, before);
  });
});

describe('escaping', () => {
  const hostile = '<!channel> & <https://evil.example|click> "quoted" \'single\'\nline 2';

  test('Slack: a value’s &, < and > are escaped; the template’s own mrkdwn is kept', () => {
    const rendered = renderTemplate(
      '<https://example.com/map|{{device.name}}> ok',
      withDeviceName(hostile),
      'slack',
    );
    assert.equal(
      rendered,
      '<https://example.com/map|&lt;!channel&gt; &amp; &lt;https://evil.example|click&gt; "quoted" \'single\'\nline 2> ok',
    );
  });

  test('Slack: {{{x}}}, {{& x}} and changed delimiters cannot switch the escaping off', () => {
    const context = withDeviceName(hostile);
    const escaped = renderTemplate('{{device.name}}', context, 'slack');
    for (const template of [
      '{{{device.name}}}',
      '{{{ device.name }}}',
      '{{&device.name}}',
      '{{& device.name}}',
      '{{=<% %>=}}<%& device.name%>',
      '{{=<% %>=}}<%{device.name}%>',
      '{{=| |=}}|{device.name}|',
      '{{#metadata.driver}}{{{device.name}}}{{/metadata.driver}}',
    ]) {
      assert.equal(renderTemplate(template, context, 'slack'), escaped, template);
    }
    assert.ok(!/[<>]/.test(escaped));
  });

  test('text: values stay exactly as they are, whichever tag form renders them', () => {
    const context = withDeviceName(hostile);
    for (const template of ['{{device.name}}', '{{{device.name}}}', '{{& device.name}}']) {
      assert.equal(renderTemplate(template, context, 'text'), hostile, template);
    }
  });
});

describe('templateProblem', () => {
  test('refuses unclosed and mismatched sections and unclosed tags', () => {
    for (const template of [
      '{{#metadata.stops}}no end',
      '{{^test}}no end',
      'no start{{/test}}',
      '{{#a}}{{#b}}{{/a}}{{/b}}',
      '{{device.name',
      '{{{device.name}}',
      'fine {{device.name}} then {{',
      '{{=<% %>=}}<%device.name',
    ]) {
      const problem = templateProblem(template);
      assert.ok(problem?.startsWith('Invalid template: '), `${template}: ${problem}`);
    }
  });

  test('refuses partials, also inside sections and inverted sections', () => {
    for (const template of [
      '{{> header}}',
      '{{#test}}{{>footer}}{{/test}}',
      '{{^test}}{{#a}}{{> p}}{{/a}}{{/test}}',
    ]) {
      assert.equal(
        templateProblem(template),
        'Invalid template: partials ({{> name}}) are not supported',
        template,
      );
    }
  });

  test('accepts plain text, every variable form, sections, comments and delimiter changes', () => {
    for (const template of [
      '',
      'no tags at all: { } }} {',
      '{{device.name}} {{{geofence.name}}} {{& event_type}} {{ point.lat }}',
      '{{#metadata.stops}}{{name}}{{/metadata.stops}}{{^test}}live{{/test}}',
      '{{! a comment }}{{unknown.variable}}',
      '{{=<% %>=}}<% device.name %><%={{ }}=%>{{event}}',
    ]) {
      assert.equal(templateProblem(template), null, template);
    }
  });
});

describe('defaults', () => {
  test('the default message and subject name the device, the event and the geofence', () => {
    assert.equal(
      defaultMessage(sampleContext()),
      'Truck 7 entered Depot (52.52, 13.405) at 2026-03-10T12:34:56.789Z',
    );
    assert.equal(
      defaultSubject(sampleContext({ event: 'geofence.exit', event_type: 'exit' })),
      'Truck 7 left Depot',
    );
    assert.equal(
      defaultSubject(sampleContext({ event: 'geofence.dwell', event_type: 'dwell', test: true })),
      '[test] Truck 7 has stayed in Depot',
    );
  });
});

// --- properties -------------------------------------------------------------------------------

/** Text with the characters the escapes and the Mustache syntax care about made frequent. */
const tricky = fc.string({
  unit: fc.oneof(
    { weight: 3, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
    {
      weight: 2,
      arbitrary: fc.constantFrom('<', '>', '&', '&amp;', '&lt;', '{{', '}}', '{', '}', '\n', '"'),
    },
  ),
  maxLength: 24,
});

/** Built-in member names: a template may name them, and the data may use them as keys. */
const PROTOTYPE_NAMES = [
  'constructor',
  '__proto__',
  '__defineGetter__',
  '__defineSetter__',
  'toString',
  'valueOf',
  'hasOwnProperty',
  'map',
  'push',
  'pop',
  'toFixed',
  'length',
] as const;

const key = fc.oneof(
  fc.constantFrom('name', 'plate', 'stops', 'tags', 'zone', '0', ...PROTOTYPE_NAMES),
  fc.string({ maxLength: 6 }),
);
const metadata = fc.dictionary(key, fc.jsonValue({ maxDepth: 3 }), {
  maxKeys: 5,
  noNullPrototype: true,
}) as fc.Arbitrary<Record<string, unknown>>;

const randomContext: fc.Arbitrary<TemplateContext> = fc
  .record({
    kind: fc.constantFrom('enter', 'exit', 'dwell'),
    deviceName: tricky,
    geofenceName: tricky,
    externalId: fc.option(tricky),
    deviceMetadata: metadata,
    geofenceMetadata: metadata,
    eventMetadata: metadata,
    lat: fc.double({ min: -90, max: 90, noNaN: true }),
    lng: fc.double({ min: -180, max: 180, noNaN: true }),
    test: fc.boolean(),
  })
  .map((r) => {
    const context = sampleContext({
      event: `geofence.${r.kind}`,
      event_type: r.kind,
      point: { lat: r.lat, lng: r.lng },
      metadata: r.eventMetadata,
      test: r.test,
    });
    context.device = {
      ...context.device,
      name: r.deviceName,
      external_id: r.externalId,
      metadata: r.deviceMetadata,
    };
    context.geofence = { ...context.geofence, name: r.geofenceName, metadata: r.geofenceMetadata };
    return context;
  });

const ROOTS = [
  'event',
  'event_type',
  'device',
  'geofence',
  'point',
  'metadata',
  'workflow',
  'test',
  'payload_json',
];
const segment = fc.oneof(
  fc.constantFrom(...ROOTS),
  key.filter((k) => /^[^\s{}=!#^/&>.]+$/.test(k)),
);
const variable = fc.oneof(
  fc.constant('.'),
  fc.array(segment, { minLength: 1, maxLength: 4 }).map((parts) => parts.join('.')),
);

/** Templates made of valid pieces (text, every tag form, nested sections) or of arbitrary text. */
const { template: structuredTemplate } = fc.letrec<{ template: string; piece: string }>((tie) => ({
  template: fc.array(tie('piece'), { maxLength: 6 }).map((pieces) => pieces.join('')),
  piece: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    tricky.map((text) => text.replaceAll('{', '(').replaceAll('}', ')')),
    variable.map((name) => `{{${name}}}`),
    variable.map((name) => `{{{${name}}}}`),
    variable.map((name) => `{{& ${name}}}`),
    fc
      .tuple(fc.constantFrom('#', '^'), variable, tie('template'))
      .map(([kind, name, inner]) => `{{${kind}${name}}}${inner}{{/${name}}}`),
    variable.map((name) => `{{=<% %>=}}<%& ${name}%><%={{ }}=%>`),
    fc.constant('{{! note }}'),
  ),
}));
const anyTemplate = fc.oneof(structuredTemplate, tricky, fc.string({ maxLength: 40 }));

const escapings: Escaping[] = ['text', 'slack'];

describe('properties', () => {
  test('any template templateProblem accepts renders, for any context, without changing it', () => {
    fc.assert(
      fc.property(anyTemplate, randomContext, (template, context) => {
        fc.pre(templateProblem(template) === null);
        const before = JSON.stringify(context);
        for (const escaping of escapings) {
          assert.equal(typeof renderTemplate(template, context, escaping), 'string');
        }
        assert.equal(JSON.stringify(context), before);
      }),
      { numRuns: RUNS },
    );
  });

  test('Slack: no < or > comes from a value, and unescaping gives the value back', () => {
    const forms = fc.constantFrom(
      '{{device.name}}',
      '{{{device.name}}}',
      '{{& device.name}}',
      '{{=<% %>=}}<%& device.name%>',
    );
    fc.assert(
      fc.property(tricky, forms, (name, template) => {
        const rendered = renderTemplate(template, withDeviceName(name), 'slack');
        assert.ok(!/[<>]/.test(rendered), rendered);
        assert.equal(unescapeSlack(rendered), name);
      }),
      { numRuns: RUNS },
    );
  });

  test('Slack: in a template whose own text has no < or >, the output has none', () => {
    fc.assert(
      fc.property(randomContext, (context) => {
        const rendered = renderTemplate(
          'Alert: {{device.name}} {{event_type}} {{geofence.name}} {{device.external_id}} {{#device.metadata.tags}}{{.}} {{/device.metadata.tags}}{{device.metadata}}',
          context,
          'slack',
        );
        assert.ok(!/[<>]/.test(rendered), rendered);
      }),
      { numRuns: RUNS },
    );
  });

  test('text: {{device.name}} renders the name exactly', () => {
    fc.assert(
      fc.property(fc.oneof(tricky, fc.string({ unit: 'binary' })), (name) => {
        assert.equal(renderTemplate('{{device.name}}', withDeviceName(name), 'text'), name);
      }),
      { numRuns: RUNS },
    );
  });
});

describe('variables that are none of the documented ones', () => {
  test('named in order of first use; documented ones, metadata keys and sections are not', () => {
    assert.deepEqual(
      unknownVariables('{{bogus.var}} {{device.nmae}} {{device.name}} {{bogus.var}} {{&nope}}'),
      ['bogus.var', 'device.nmae', 'nope'],
    );
    assert.deepEqual(
      unknownVariables(
        '{{event}} {{point.lat}} {{device.metadata.plate}} {{geofence.metadata.zone.code}} {{metadata.x}} {{test}}',
      ),
      [],
    );
    // Names inside a section of an object resolve in it first, then outside, as when rendering.
    assert.deepEqual(unknownVariables('{{#device}}{{name}} {{event}} {{colour}}{{/device}}'), ['colour']);
    // Over free-form metadata nothing is known: nothing is reported inside.
    assert.deepEqual(unknownVariables('{{#metadata.stops}}{{name}} {{.}}{{/metadata.stops}}'), []);
    assert.deepEqual(unknownVariables('{{^devise}}none{{/devise}}'), ['devise']);
    // A template that does not parse has its own problem (templateProblem), not this one.
    assert.deepEqual(unknownVariables('{{#device}}'), []);
  });

  test('an unknown variable renders empty, as before', () => {
    assert.equal(renderTemplate('a{{bogus.var}}b', sampleContext(), 'text'), 'ab');
  });
});

describe('the sample event of previews and test runs', () => {
  test('its point, the geofence’s centre, has no floating-point noise', () => {
    const event = sampleEvent(
      { workspaceId: 'w', geofenceId: 'g', eventTypes: ['enter'] },
      { name: 'Depot', metadata: {}, bbox: [13.404, 52.5, 13.408, 52.52] },
      new Date('2026-03-10T12:00:00Z'),
      { id: 'e', locationId: 'l' },
    );
    // (52.5 + 52.52) / 2 is 52.510000000000005 and (13.404 + 13.408) / 2 is 13.405999999999999.
    assert.deepEqual([event.lat, event.lng], [52.51, 13.406]);
    assert.equal(
      defaultMessage({ ...sampleContext(), point: { lat: event.lat, lng: event.lng } }).includes(
        '(52.51, 13.406)',
      ),
      true,
    );
  });
});
