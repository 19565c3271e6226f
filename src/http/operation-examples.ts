/**
 * Puts the example requests and answers of every operation (ADR 013) into the document's media
 * objects once it is generated. The examples are kept beside each domain's schemas
 * (`src/<domain>/*.examples.ts`, the probes' in src/http/examples/), keyed by `METHOD /path` as the
 * document writes them, and gathered by the composition root (`src/operation-examples.ts`).
 * test/http/openapi-examples.test.ts checks that every operation has them and that each validates
 * against the schema it illustrates.
 */
import type { OperationExamples } from './examples/operation-example.ts';

interface Media {
  example?: unknown;
}

interface DocumentOperation {
  requestBody?: { content?: Record<string, Media> };
  responses?: Record<string, { content?: Record<string, Media> }>;
}

/** Sets each operation's request and response examples on its media objects. */
export function withOperationExamples<T>(document: T, examples: OperationExamples): T {
  const paths = (document as { paths?: Record<string, Record<string, DocumentOperation>> }).paths ?? {};
  for (const [path, operations] of Object.entries(paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const example = examples[`${method.toUpperCase()} ${path}`];
      if (example === undefined) continue;
      for (const [type, media] of Object.entries(operation.requestBody?.content ?? {})) {
        const request = example.requestByType?.[type] ?? example.request;
        if (request !== undefined) media.example = request;
      }
      for (const [status, body] of Object.entries(example.responses)) {
        for (const media of Object.values(operation.responses?.[status]?.content ?? {})) media.example = body;
      }
    }
  }
  return document;
}
