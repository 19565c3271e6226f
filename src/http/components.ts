/**
 * Named schemas: a schema passed through `component(name, …)` is documented once, as
 * `components.schemas[name]`, and every use of it in the OpenAPI document is a `$ref` (ADR 013).
 *
 * The name is a hidden (non-enumerable) property, as TypeBox keeps its own `~kind`: ajv,
 * fast-json-stringify and JSON never see it, so validation and serialisation are those of the plain
 * schema. A `$id` would not do: ajv refuses a schema in which one `$id` appears twice ("resolves to
 * more than one schema"), as a response listing locations and events would show Point twice.
 * TypeBox's Optional copies hidden properties, so an optional use stays a use of the component; a
 * spread copy such as `Nullable(schema)` drops it and is documented inline, as it is another schema.
 */
import type { TSchema } from 'typebox';

const NAME = '~component';

/** The canonical schema of each name: the first one named so. */
const canonical = new Map<string, object>();

/** Names `schema` as the component `name` and returns it unchanged (same object, same type). */
export function component<T extends TSchema>(name: string, schema: T): T {
  const existing = componentName(schema);
  if (existing !== undefined && existing !== name) {
    throw new Error(`A schema named ${existing} cannot also be named ${name}`);
  }
  Object.defineProperty(schema, NAME, { value: name, enumerable: false, configurable: true });
  if (!canonical.has(name)) canonical.set(name, schema);
  return schema;
}

/**
 * The same component with another description: a response documented as `$ref` to the component
 * with its own description (e.g. one error body, a description per status).
 */
export function describedComponent<T extends TSchema>(schema: T, description: string): T {
  const name = componentName(schema);
  if (name === undefined) throw new Error('describedComponent needs a named schema');
  const copy = { ...schema, description } as T;
  Object.defineProperty(copy, NAME, { value: name, enumerable: false, configurable: true });
  return copy;
}

export function componentName(schema: unknown): string | undefined {
  if (typeof schema !== 'object' || schema === null) return undefined;
  const name = (schema as Record<string, unknown>)[NAME];
  return typeof name === 'string' ? name : undefined;
}

/** The schema first named `name`: the one `components.schemas[name]` documents. */
export function canonicalComponent(name: string): object {
  const schema = canonical.get(name);
  if (schema === undefined) throw new Error(`No component named ${name}`);
  return schema;
}
