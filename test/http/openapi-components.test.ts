/**
 * Named schemas (ADR 013): each resource is one `components.schemas` entry referenced by `$ref`
 * wherever it is used, while the route schemas Fastify validates and serialises with stay plain.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import SwaggerParser from '@apidevtools/swagger-parser';
import { Type } from 'typebox';
import { GeofenceSchema } from '../../src/geofences/geofences.schemas.ts';
import { ComponentCatalogue } from '../../src/http/component-catalogue.ts';
import { component, describedComponent } from '../../src/http/components.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { type Document, NAMED_SCHEMAS, servedDocument } from '../helpers/openapi.ts';

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

describe('OpenAPI components', () => {
  let t: TestApp;
  let document: Document;
  before(async () => {
    t = await startTestApp();
    document = await servedDocument(t);
  });
  after(async () => t.close());

  test('the resources are named components, and the document is valid with every $ref resolved', async () => {
    for (const name of NAMED_SCHEMAS) assert.ok(document.components.schemas[name], `component ${name}`);
    await SwaggerParser.validate(structuredClone(document) as never);
  });

  test('operations refer to the components instead of inlining them', () => {
    const geofences = document.paths['/api/v1/geofences'];
    const one = document.paths['/api/v1/geofences/{geofence_id}'];
    assert.deepEqual(one?.get?.responses['200']?.content?.['application/json']?.schema, ref('Geofence'));
    assert.deepEqual(
      geofences?.post?.responses['201']?.content?.['application/json']?.schema,
      ref('Geofence'),
    );
    assert.deepEqual(one?.get?.responses['404']?.content?.['application/json']?.schema, ref('Error'));
    assert.deepEqual(
      geofences?.get?.responses['200']?.content?.['application/json']?.schema,
      ref('GeofenceList'),
    );
    const list = document.components.schemas.GeofenceList as {
      properties: { results: { items: unknown }; pagination: unknown };
    };
    assert.deepEqual(list.properties.results.items, ref('Geofence'));
    assert.deepEqual(list.properties.pagination, ref('Pagination'));
    const geofence = document.components.schemas.Geofence as { properties: { geometry: unknown } };
    assert.deepEqual(geofence.properties.geometry, ref('GeofenceGeometry'));
  });

  test('no component is also written out inline, and every component is used', () => {
    const paths = JSON.stringify(document.paths);
    const everything = JSON.stringify(document);
    for (const [name, schema] of Object.entries(document.components.schemas)) {
      assert.ok(!paths.includes(JSON.stringify(schema)), `${name} is inlined in an operation`);
      assert.ok(everything.includes(`"#/components/schemas/${name}"`), `${name} is referenced`);
    }
  });

  test('naming a schema leaves what validation and serialisation see unchanged', () => {
    const plain = Type.Object({ id: Type.String() });
    const before = JSON.stringify(plain);
    const named = component('OpenApiTestNamed', plain);
    assert.equal(named, plain, 'the same object');
    assert.equal(JSON.stringify(named), before);
    assert.deepEqual(Object.keys(named), Object.keys(Type.Object({ id: Type.String() })));
    assert.ok(!JSON.stringify(GeofenceSchema).includes('Geofence'), 'no name in the validated schema');
  });

  test('an optional use is the component; a use with its own description keeps it', () => {
    const item = component('OpenApiTestItem', Type.Object({ n: Type.Integer() }));
    const catalogue = new ComponentCatalogue();
    const documented = catalogue.document({
      type: 'object',
      properties: { a: item, b: Type.Optional(item), c: describedComponent(item, 'Why') },
    });
    assert.deepEqual(documented, {
      type: 'object',
      properties: {
        a: ref('OpenApiTestItem'),
        b: ref('OpenApiTestItem'),
        c: { ...ref('OpenApiTestItem'), description: 'Why' },
      },
    });
    assert.deepEqual(catalogue.schemas.OpenApiTestItem, JSON.parse(JSON.stringify(item)));
  });

  test('a different schema under a taken name is refused', () => {
    component('OpenApiTestTaken', Type.Object({ n: Type.Integer() }));
    const impostor = component('OpenApiTestTaken', Type.Object({ n: Type.String() }));
    assert.throws(
      () => new ComponentCatalogue().document({ properties: { x: impostor } }),
      /differs from the component OpenApiTestTaken/,
    );
  });
});
