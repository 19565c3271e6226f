/**
 * Free-form JSON objects (`metadata`, notification `data`, …), contract §1: any keys, kept exactly
 * as sent, and at most `MAX_FREE_OBJECT_DEPTH` levels of nesting.
 *
 * The schema says `additionalProperties: true` rather than TypeBox's Record (`patternProperties:
 * {"^.*$": …}`): `.` matches no line terminator, so the response serialiser dropped every key
 * holding a line break, U+2028 or U+2029. `x-max-depth` is a keyword of our own (an `x-` name, so the
 * OpenAPI document stays valid) that `registerMaxDepthKeyword` teaches ajv.
 */
import type { Ajv, SchemaValidateFunction } from 'ajv';
import { Type } from 'typebox';

export const MAX_FREE_OBJECT_DEPTH = 16;
export const MAX_DEPTH_KEYWORD = 'x-max-depth';

export function freeObject(description: string) {
  return Type.Unsafe<Record<string, unknown>>({
    type: 'object',
    additionalProperties: true,
    [MAX_DEPTH_KEYWORD]: MAX_FREE_OBJECT_DEPTH,
    description: `${description} (JSON object; keys kept exactly; nests at most ${MAX_FREE_OBJECT_DEPTH} levels)`,
  });
}

/** RFC 6901: `~` and `/` escaped, as ajv writes instance paths. */
function pointerSegment(key: string | number): string {
  return typeof key === 'number' ? String(key) : key.replaceAll('~', '~0').replaceAll('/', '~1');
}

/**
 * The path (below the object) of the first container nested deeper than `limit` levels, the object
 * itself being level 1; undefined when there is none. Breadth-first with a queue, never recursing,
 * and never looking below level `limit + 1`.
 */
export function tooDeepPath(value: unknown, limit: number): Array<string | number> | undefined {
  type Node = { value: unknown; depth: number; path: Array<string | number> };
  let level: Node[] = [{ value, depth: 1, path: [] }];
  while (level.length > 0) {
    const next: Node[] = [];
    for (const node of level) {
      if (node.value === null || typeof node.value !== 'object') continue;
      if (node.depth > limit) return node.path;
      const entries: Array<[string | number, unknown]> = Array.isArray(node.value)
        ? node.value.map((v, i): [number, unknown] => [i, v])
        : Object.entries(node.value);
      for (const [key, child] of entries) {
        if (child !== null && typeof child === 'object') {
          next.push({ value: child, depth: node.depth + 1, path: [...node.path, key] });
        }
      }
    }
    level = next;
  }
  return undefined;
}

export function registerMaxDepthKeyword(ajv: Ajv): void {
  const validate: SchemaValidateFunction = (limit: number, data: unknown, _parent, cxt) => {
    const path = tooDeepPath(data, limit);
    if (path === undefined) return true;
    validate.errors = [
      {
        keyword: MAX_DEPTH_KEYWORD,
        // Set here, so ajv keeps it: the place of the too-deep value, not of the object.
        instancePath: (cxt?.instancePath ?? '') + path.map((k) => `/${pointerSegment(k)}`).join(''),
        params: { limit },
        message: `Object nests more than ${limit} levels deep`,
      },
    ];
    return false;
  };
  ajv.addKeyword({
    keyword: MAX_DEPTH_KEYWORD,
    type: 'object',
    schemaType: 'number',
    errors: true,
    validate,
  });
}
