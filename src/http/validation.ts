/**
 * One schema drives validation, types, serialisation and OpenAPI. Bodies are validated strictly
 * (no type coercion: `"5"` is not an integer; unknown fields kept so `additionalProperties: false`
 * can answer `extra_forbidden` instead of silently dropping them). Query strings and path params
 * arrive as text, so they are coerced. The text rules of contract §1 run before (input-rules.ts);
 * `date-time` and the `x-max-depth` keyword of free-form objects are narrowed here (ADR 003).
 */
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler, FastifySchemaValidationError } from 'fastify';
import { registerDateTimeFormat } from './date-time-format.ts';
import { registerMaxDepthKeyword } from './free-object.ts';

// ajv-formats is CommonJS with `exports.default`; under NodeNext the callable is `.default`.
const addFormats = addFormatsModule.default;

export function createAjv(coerceTypes: boolean | 'array'): Ajv {
  const ajv = new Ajv({
    coerceTypes,
    useDefaults: true,
    removeAdditional: false,
    allErrors: true,
    strict: false,
    // OpenAPI's `discriminator` on a `oneOf` (workflow actions): only the named branch reports errors,
    // and an unknown tag is answered with the tags allowed (read from the error's `parentSchema`).
    discriminator: true,
    verbose: coerceTypes === false,
  });
  addFormats(ajv);
  // Contract §1: timestamps both databases store; free-form objects nest at most 16 levels.
  registerDateTimeFormat(ajv);
  registerMaxDepthKeyword(ajv);
  return ajv;
}

export function createValidatorCompiler(): FastifySchemaCompiler<unknown> {
  const bodyAjv = createAjv(false);
  const textAjv = createAjv('array');
  const cache = new WeakMap<object, ValidateFunction>();
  return ({ schema, httpPart }) => {
    const ajv = httpPart === 'body' ? bodyAjv : textAjv;
    const key = schema as object;
    // The same schema object may serve many routes; compile it once per part.
    if (httpPart !== 'body') return ajv.compile(key);
    let validate = cache.get(key);
    if (!validate) {
      validate = ajv.compile(key);
      cache.set(key, validate);
    }
    return validate;
  };
}

/**
 * A failed validation is an ordinary client answer (422), not a fault, so its error carries no stack
 * trace: it is an object with Error's prototype (`instanceof Error`, which Fastify's reply path
 * checks) made without running the Error constructor. Constructing an Error captures a stack even
 * with `Error.stackTraceLimit = 0`, which through the request's deep call chain costs more than
 * validating the body (ADR 012). The message is
 * Fastify's default text; the 422 body is built from `error.validation` by the error handler.
 */
export function schemaErrorFormatter(errors: FastifySchemaValidationError[], dataVar: string): Error {
  const error = Object.create(Error.prototype) as Error;
  error.message = messageOf(errors, dataVar);
  return error;
}

function messageOf(errors: readonly FastifySchemaValidationError[], dataVar: string): string {
  let text = '';
  for (const e of errors) text += `${text ? ', ' : ''}${dataVar}${e.instancePath || ''} ${e.message ?? ''}`;
  return text;
}
