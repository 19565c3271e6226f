/**
 * The documented form of route schemas: every named schema (components.ts) becomes
 * `{$ref: '#/components/schemas/<name>'}`, and its own documented form is kept in `schemas`, the
 * object handed to @fastify/swagger as `components.schemas` (which converts it to OpenAPI 3.0 like
 * any route schema). The route schemas themselves are not changed: Fastify validates and serialises
 * with them as they are.
 */
import { canonicalComponent, componentName } from './components.ts';

const REF_PREFIX = '#/components/schemas/';

/** Uses already compared with their component: each once, however many apps and routes document it. */
const checkedUses = new WeakSet<object>();

export function componentRef(name: string): string {
  return REF_PREFIX + name;
}

export class ComponentCatalogue {
  /** name → documented schema; filled as route schemas are documented. */
  readonly schemas: Record<string, unknown> = {};

  /** A copy of `schema` with every named schema in it (the root too) replaced by a `$ref`. */
  document(schema: unknown): unknown {
    return this.copy(schema, false);
  }

  /** Adds the component (and the components it uses) to `schemas`; returns its `$ref`. */
  add(name: string): string {
    if (!(name in this.schemas)) {
      // Claimed before the walk so a component can (indirectly) refer to itself.
      this.schemas[name] = {};
      this.schemas[name] = this.copy(canonicalComponent(name), true);
    }
    return componentRef(name);
  }

  private copy(value: unknown, isComponentRoot: boolean): unknown {
    if (Array.isArray(value)) return value.map((item) => this.copy(item, false));
    if (typeof value !== 'object' || value === null) return value;
    const name = isComponentRoot ? undefined : componentName(value);
    if (name !== undefined) return this.reference(name, value as Record<string, unknown>);
    const out: Record<string, unknown> = {};
    for (const [key, child] of Object.entries(value)) out[key] = this.copy(child, false);
    return out;
  }

  /** The `$ref` of a use; a use with its own description keeps it (a response's description). */
  private reference(name: string, use: Record<string, unknown>): Record<string, unknown> {
    const canonical = canonicalComponent(name) as Record<string, unknown>;
    if (use !== canonical && !checkedUses.has(use)) {
      // A use differing in anything but its description is another schema under the same name.
      const { description: _use, ...rest } = use;
      const { description: _canonical, ...canonicalRest } = canonical;
      if (JSON.stringify(rest) !== JSON.stringify(canonicalRest)) {
        throw new Error(`A schema named ${name} differs from the component ${name}`);
      }
      checkedUses.add(use);
    }
    const ref = { $ref: this.add(name) };
    const { description } = use;
    return description !== undefined && description !== canonical.description ? { ...ref, description } : ref;
  }
}
