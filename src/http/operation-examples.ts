/**
 * Example requests and answers of every operation (ADR 013), kept in src/http/examples/ by area
 * and keyed by `METHOD /path` as the document writes them; put into the document's media objects
 * once it is generated. test/http/openapi-examples.test.ts checks that every operation has them and
 * that each validates against the schema it illustrates.
 */
import { billingExamples } from './examples/billing.ts';
import { geofenceExamples } from './examples/geofences.ts';
import { identityExamples } from './examples/identity.ts';
import type { OperationExamples } from './examples/operation-example.ts';
import { pipelineExamples } from './examples/pipeline.ts';
import { probeExamples } from './examples/probes.ts';
import { streamExamples } from './examples/stream.ts';
import { webhookExamples } from './examples/webhooks.ts';
import { workflowExamples } from './examples/workflows.ts';

export const OPERATION_EXAMPLES: OperationExamples = {
  ...probeExamples,
  ...identityExamples,
  ...geofenceExamples,
  ...pipelineExamples,
  ...streamExamples,
  ...webhookExamples,
  ...workflowExamples,
  ...billingExamples,
};

interface Media {
  example?: unknown;
}

interface DocumentOperation {
  requestBody?: { content?: Record<string, Media> };
  responses?: Record<string, { content?: Record<string, Media> }>;
}

/** Sets each operation's request and response examples on its media objects. */
export function withOperationExamples<T>(document: T): T {
  const paths = (document as { paths?: Record<string, Record<string, DocumentOperation>> }).paths ?? {};
  for (const [path, operations] of Object.entries(paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const example = OPERATION_EXAMPLES[`${method.toUpperCase()} ${path}`];
      if (example === undefined) continue;
      if (example.request !== undefined) {
        for (const media of Object.values(operation.requestBody?.content ?? {}))
          media.example = example.request;
      }
      for (const [status, body] of Object.entries(example.responses)) {
        for (const media of Object.values(operation.responses?.[status]?.content ?? {})) media.example = body;
      }
    }
  }
  return document;
}
