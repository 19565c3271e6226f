/**
 * The `ETag` header of the OpenAPI document: answers carrying one version of a versioned record
 * (entity-tags.ts) declare it, so a client knows what to send back in `If-Match`. Declared once
 * under `components.headers` and referenced from each such response.
 */
const ETAG = {
  description:
    'The version of the record answered, as an entity tag (`"3"`); `If-Match` on its PATCH names it',
  schema: { type: 'string' },
};

/** Operations answering one versioned record, as `METHOD path` of the document. */
const VERSIONED_ANSWERS = [
  'POST /api/v1/workflows',
  'GET /api/v1/workflows/{workflow_id}',
  'PATCH /api/v1/workflows/{workflow_id}',
];

interface Document {
  components?: { headers?: Record<string, unknown> };
  paths?: Record<
    string,
    Record<string, { responses?: Record<string, { headers?: Record<string, unknown> }> }>
  >;
}

export function withEntityTagHeaders<T>(document: T): T {
  const doc = document as Document;
  doc.components = { ...doc.components, headers: { ...doc.components?.headers, ETag: ETAG } };
  for (const name of VERSIONED_ANSWERS) {
    const [method, path] = name.split(' ') as [string, string];
    const operation = doc.paths?.[path]?.[method.toLowerCase()];
    if (!operation) throw new Error(`entity-tag-headers: no operation ${name} in the document`);
    for (const [status, response] of Object.entries(operation.responses ?? {})) {
      if (status.startsWith('2')) {
        response.headers = { ...response.headers, ETag: { $ref: '#/components/headers/ETag' } };
      }
    }
  }
  return document;
}
