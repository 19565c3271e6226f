/**
 * One schema drives validation, types, serialisation and OpenAPI. Bodies are validated strictly
 * (no type coercion: `"5"` is not an integer; unknown fields kept so `additionalProperties: false`
 * can answer `extra_forbidden` instead of silently dropping them). Query strings and path params
 * arrive as text, so they are coerced.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

// ajv-formats is CommonJS with `exports.default`; under NodeNext the callable is `.default`.
const addFormats = addFormatsModule.default;

export function createAjv(coerceTypes: boolean | 'array'): Ajv {
  const ajv = new Ajv({
    coerceTypes,
    useDefaults: true,
    removeAdditional: false,
    allErrors: true,
    strict: false,
  });
  addFormats(ajv);
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
