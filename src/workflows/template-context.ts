/**
 * The lookup of template names over the event's data (ADR 014): own properties of objects and
 * arrays only. Mustache's own lookup follows prototypes and calls the functions it finds, so
 * `{{metadata.__defineGetter__}}` threw and `{{device.metadata.tags.push}}` changed the context;
 * here both are unknown names (empty).
 *
 * Each lookup is charged to the render's budget by the properties it examines: a long dotted
 * name looked up through deeply nested sections costs in proportion to the work it does.
 */
import Mustache from 'mustache';
import { RenderBudget } from './template-budget.ts';

/** What the contexts of one render share. */
interface LookupScope {
  budget: RenderBudget;
  /** Dotted names split once per render, not once per lookup. */
  paths: Map<string, readonly string[]>;
}

export class DataContext extends Mustache.Context {
  private readonly scope: LookupScope;

  constructor(view: unknown, parent?: DataContext, budget?: RenderBudget) {
    super(view, parent);
    this.scope = parent?.scope ?? { budget: budget ?? new RenderBudget(), paths: new Map() };
  }

  override push(view: unknown): Mustache.Context {
    return new DataContext(view, this);
  }

  override lookup(name: string): unknown {
    if (name === '.') return this.view;
    const path = this.pathOf(name);
    const { budget } = this.scope;
    for (let context: Mustache.Context | undefined = this; context; context = context.parent) {
      // Walks the path through own properties; `found` stays false where a name is missing.
      let value: unknown = context.view;
      let found = true;
      let examined = 0;
      for (const key of path) {
        examined += 1;
        if (value === null || typeof value !== 'object' || !Object.hasOwn(value, key)) {
          found = false;
          break;
        }
        value = (value as Record<string, unknown>)[key];
      }
      budget.step(examined);
      if (found && typeof value !== 'function') return value;
    }
    return undefined;
  }

  private pathOf(name: string): readonly string[] {
    let path = this.scope.paths.get(name);
    if (path === undefined) {
      path = name.split('.');
      this.scope.paths.set(name, path);
    }
    return path;
  }
}
