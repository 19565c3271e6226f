/**
 * What the OpenAPI document says of one route: its schema with the common error responses added
 * (common-error-responses.ts), every named schema as a `$ref` (component-catalogue.ts) and the
 * security fields of its `config.auth`. Only the document sees this form; the route keeps its own
 * schema for validation and serialisation.
 */
import { commonErrorResponses } from './common-error-responses.ts';
import type { ComponentCatalogue } from './component-catalogue.ts';
import { componentName, describedComponent } from './components.ts';
import { openApiAuthFields, type RouteAuthDeclaration } from './route-auth-declaration.ts';
import { ErrorSchema } from './schemas.ts';

export interface DocumentedRoute {
  url: string;
  schema?: unknown;
  config?: unknown;
  bodyLimit?: number | undefined;
}

export interface DocumentationSettings {
  /** The application's body limit, for routes without their own. */
  bodyLimit: number;
  apiKeyRateLimited: boolean;
}

interface RouteSchema {
  hide?: boolean;
  body?: unknown;
  params?: unknown;
  querystring?: unknown;
  response?: Record<string, unknown>;
}

export function documentedSchema(
  route: DocumentedRoute,
  settings: DocumentationSettings,
  catalogue: ComponentCatalogue,
): Record<string, unknown> {
  const schema = (route.schema ?? {}) as RouteSchema & Record<string, unknown>;
  if (schema.hide) return schema;
  const auth = (route.config as { auth?: RouteAuthDeclaration } | undefined)?.auth;
  const common = commonErrorResponses({
    hasBody: schema.body !== undefined,
    hasPathParams: schema.params !== undefined || route.url.includes(':'),
    hasQuery: schema.querystring !== undefined,
    auth,
    bodyLimit: route.bodyLimit ?? settings.bodyLimit,
    apiKeyRateLimited: settings.apiKeyRateLimited,
  });
  const response: Record<string, unknown> = { ...schema.response };
  for (const [status, cause] of common) {
    const declared = response[status] as { description?: string } | undefined;
    if (declared === undefined) {
      response[status] = describedComponent(ErrorSchema, cause);
    } else if (componentName(declared) === 'Error') {
      response[status] = describedComponent(ErrorSchema, joinCauses(declared.description, cause));
    }
  }
  return {
    ...(catalogue.document({ ...schema, response }) as Record<string, unknown>),
    ...openApiAuthFields(auth),
  };
}

/** The route's own description of an error status, then the common cause it does not state. */
function joinCauses(declared: string | undefined, common: string): string {
  if (declared === undefined || declared === common) return common;
  return `${declared}; ${common.charAt(0).toLowerCase()}${common.slice(1)}`;
}
