/**
 * Every operation shows an example request (when it takes a body) and an example answer, and every
 * example validates against the schema it illustrates, so examples cannot drift from the schemas.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { OPERATION_EXAMPLES } from '../../src/operation-examples.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import {
  type Document,
  type DocumentedOperation,
  documentedOperations,
  SchemaValidator,
  servedDocument,
  successStatus,
} from '../helpers/openapi.ts';

describe('OpenAPI examples', () => {
  let t: TestApp;
  let document: Document;
  let operations: DocumentedOperation[];
  const validator = new SchemaValidator();

  before(async () => {
    t = await startTestApp();
    document = await servedDocument(t);
    operations = await documentedOperations(document);
  });
  after(async () => t.close());

  test('every operation taking a body has an example request that matches the body schema', () => {
    for (const op of operations) {
      for (const [type, media] of Object.entries(op.operation.requestBody?.content ?? {})) {
        assert.notEqual(media.example, undefined, `${op.label}: no example ${type} request`);
        assert.equal(validator.errors(media.schema ?? {}, media.example), '', `${op.label}: example request`);
      }
    }
  });

  test('every operation has an example success answer that matches its schema', () => {
    for (const op of operations) {
      const status = successStatus(op.operation);
      const content = Object.entries(op.operation.responses[status]?.content ?? {});
      if (status === '204') {
        assert.equal(content.length, 0, `${op.label}: a 204 has no body`);
        continue;
      }
      assert.ok(content.length > 0, `${op.label}: ${status} documents a body`);
      for (const [type, media] of content) {
        assert.notEqual(media.example, undefined, `${op.label}: no example ${status} ${type} answer`);
        const errors = validator.errors(media.schema ?? {}, media.example);
        assert.equal(errors, '', `${op.label}: example ${status} answer`);
      }
    }
  });

  test('every other example answer matches the schema of its status', () => {
    let checked = 0;
    for (const op of operations) {
      for (const [status, response] of Object.entries(op.operation.responses)) {
        for (const media of Object.values(response.content ?? {})) {
          if (media.example === undefined) continue;
          assert.equal(
            validator.errors(media.schema ?? {}, media.example),
            '',
            `${op.label} ${status} example`,
          );
          checked += 1;
        }
      }
    }
    assert.ok(checked > operations.length / 2, `${checked} example answers checked`);
  });

  test('examples inside schemas match the schema that holds them', () => {
    let checked = 0;
    const visit = (node: unknown, where: string): void => {
      if (typeof node !== 'object' || node === null) return;
      const schema = node as Record<string, unknown>;
      if ('example' in schema && ('type' in schema || 'properties' in schema)) {
        assert.equal(validator.errors(schema, schema.example), '', `schema example at ${where}`);
        checked += 1;
      }
      for (const [key, child] of Object.entries(schema)) {
        if (key !== 'example') visit(child, `${where}/${key}`);
      }
    };
    for (const op of operations) {
      visit(op.operation.requestBody, `${op.label} requestBody`);
      visit(op.operation.responses, `${op.label} responses`);
    }
    assert.ok(checked > 0, 'the geometry and location schemas carry examples');
  });

  test('every example belongs to a documented operation, status and body', () => {
    const byLabel = new Map(operations.map((op) => [op.label, op.operation]));
    for (const [label, example] of Object.entries(OPERATION_EXAMPLES)) {
      const operation = byLabel.get(label);
      assert.ok(operation, `example for ${label}, which is not documented`);
      if (example.request !== undefined) assert.ok(operation.requestBody, `${label}: takes no body`);
      for (const status of Object.keys(example.responses)) {
        assert.ok(operation.responses[status]?.content, `${label}: ${status} is not documented with a body`);
      }
    }
    assert.ok(Object.keys(document.paths).length > 0);
  });
});
