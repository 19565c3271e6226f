/**
 * Request rules that hold on every route before its schema is checked (contract §1, ADR 003):
 * - bodies are JSON: Fastify's `text/plain` parser is removed, so a body of any other type is 415;
 * - the text rules (`text-rules.ts`) on the JSON body, the query and the path parameters, answered
 *   as the contract's 422 with the exact `loc` of each offending value or key.
 *
 * The check is a hook of each route that has something to check, decided when the route is added
 * (no request reads its route's config, ADR 012). A batch route whose items are accepted or
 * rejected one by one declares `config.bodyTextRulesPerItem` and checks each item itself, so one
 * bad item does not fail the others.
 */
import type { FastifyInstance, FastifyRequest, preValidationHookHandler } from 'fastify';
import { FieldValidationError } from '../shared/errors.ts';
import { textIssues } from './text-rules.ts';
import type { ValidationIssue } from './validation-errors.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The handler applies the text rules to each item of the body (contract §1, batches). */
    bodyTextRulesPerItem?: boolean;
  }
}

type Part = 'body' | 'query' | 'params';

const ROOTS: Record<Part, string> = { body: 'body', query: 'query', params: 'path' };

function issuesOf(request: FastifyRequest, parts: readonly Part[]): ValidationIssue[] {
  let issues: ValidationIssue[] | undefined;
  for (const part of parts) {
    const value = request[part];
    if (value === undefined || value === null) continue;
    const found = textIssues(value, [ROOTS[part]]);
    if (found.length > 0) issues = issues ? [...issues, ...found] : found;
  }
  return issues ?? [];
}

export function registerInputRules(app: FastifyInstance): void {
  app.removeContentTypeParser('text/plain');

  app.addHook('onRoute', (route) => {
    const schema = route.schema as { body?: unknown; querystring?: unknown } | undefined;
    const config = route.config as { bodyTextRulesPerItem?: boolean } | undefined;
    const parts: Part[] = [];
    if (schema?.body !== undefined && config?.bodyTextRulesPerItem !== true) parts.push('body');
    if (schema?.querystring !== undefined) parts.push('query');
    if (route.url.includes(':')) parts.push('params');
    if (parts.length === 0) return;
    const check: preValidationHookHandler = (request, _reply, done) => {
      const issues = issuesOf(request, parts);
      done(issues.length > 0 ? new FieldValidationError(issues) : undefined);
    };
    // First, before the route's own preValidation hooks (which may read the body).
    const existing = route.preValidation;
    route.preValidation =
      existing === undefined ? [check] : [check, ...(Array.isArray(existing) ? existing : [existing])];
  });
}
