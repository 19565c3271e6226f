/**
 * The rate-limit headers of the OpenAPI document: every answer to an API key carries the key's
 * hourly budget (contract §7), and a 429 says when to try again. Declared once under
 * `components.headers` and referenced from each response.
 */
const HEADERS = {
  'X-RateLimit-Limit': {
    description: "API-key requests allowed per rolling hour by the workspace's plan (API-key requests only)",
    schema: { type: 'integer' },
  },
  'X-RateLimit-Remaining': {
    description: 'Requests left in the current rolling hour (API-key requests only)',
    schema: { type: 'integer' },
  },
  'X-RateLimit-Reset': {
    description: 'Seconds until the budget next grows (API-key requests only)',
    schema: { type: 'integer' },
  },
  'Retry-After': {
    description: 'Seconds to wait before trying again',
    schema: { type: 'integer' },
  },
};

const BUDGET_HEADERS = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'] as const;

interface DocumentOperation {
  'x-auth-via'?: string;
  responses?: Record<string, { headers?: Record<string, unknown> }>;
}

interface Document {
  components?: { headers?: Record<string, unknown> };
  paths?: Record<string, Record<string, DocumentOperation>>;
}

const ref = (name: keyof typeof HEADERS) => ({ $ref: `#/components/headers/${name}` });

/**
 * Adds the X-RateLimit-* headers to every response of an operation callable with an API key (from
 * the `x-auth-via` its auth declaration produced) and Retry-After to every 429.
 */
export function withRateLimitHeaders<T>(document: T): T {
  const doc = document as Document;
  doc.components = { ...doc.components, headers: { ...doc.components?.headers, ...HEADERS } };
  for (const operations of Object.values(doc.paths ?? {})) {
    for (const operation of Object.values(operations)) {
      const via = operation['x-auth-via'];
      const budget = via === 'any' || via === 'api_key';
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        const added: Record<string, unknown> = {};
        if (budget) for (const name of BUDGET_HEADERS) added[name] = ref(name);
        if (status === '429') added['Retry-After'] = ref('Retry-After');
        if (Object.keys(added).length > 0) response.headers = { ...added, ...response.headers };
      }
    }
  }
  return document;
}
