/**
 * The text a template value renders as (ADR 014): empty for null and absent values, JSON for
 * objects and arrays, `String(value)` otherwise. JSON is written piece by piece, each value in it
 * a step of the render's budget, and given up as soon as it is longer than the output the render
 * has left: `{{device.metadata}}` over a megabyte of metadata stops after 64 KiB of JSON instead
 * of serialising all of it (18 ms) first. Within that length the text is exactly
 * `JSON.stringify(value)`.
 */
import { type RenderBudget, TemplateBudgetError } from './template-budget.ts';

/**
 * `value` as text, refused (`TemplateBudgetError`) when it is longer than the output `budget`
 * has left. The text is not counted as output: the caller escapes it first, then writes it.
 */
export function valueText(value: unknown, budget: RenderBudget): string {
  if (value === null || value === undefined) return '';
  const text = typeof value === 'object' ? boundedJson(value, budget) : String(value);
  return budget.fit(text);
}

/** A string JSON writes as it is, between quotes: no quote, backslash, control or surrogate. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what JSON escapes
const PLAIN = /^[^"\\\u0000-\u001f\ud800-\udfff]*$/;

/** `JSON.stringify(value)`, refused once it is longer than the output left. */
function boundedJson(value: object, budget: RenderBudget): string {
  // A UTF-16 code unit is at least one UTF-8 byte: past `room` units, the output is past its bound.
  const room = budget.room();
  let json = '';

  const quoted = (text: string): string => {
    // Quoting never shortens a string: one that cannot fit is refused before it is copied.
    if (json.length + text.length + 2 > room) throw new TemplateBudgetError('output');
    return PLAIN.test(text) ? `"${text}"` : JSON.stringify(text);
  };

  const write = (item: unknown): void => {
    budget.step();
    if (typeof item === 'string') {
      json += quoted(item);
    } else if (typeof item !== 'object' || item === null) {
      json += JSON.stringify(item) ?? 'null';
    } else if (typeof (item as { toJSON?: unknown }).toJSON === 'function') {
      json += JSON.stringify(item);
    } else if (Array.isArray(item)) {
      json += '[';
      for (let i = 0; i < item.length; i += 1) {
        if (i > 0) json += ',';
        const element: unknown = item[i];
        write(isSkipped(element) ? null : element);
      }
      json += ']';
    } else {
      json += '{';
      let first = true;
      for (const key in item) {
        if (!Object.hasOwn(item, key)) continue;
        const member: unknown = (item as Record<string, unknown>)[key];
        if (isSkipped(member)) continue;
        json += `${first ? '' : ','}${quoted(key)}:`;
        first = false;
        write(member);
      }
      json += '}';
    }
    if (json.length > room) throw new TemplateBudgetError('output');
  };

  write(value);
  return json;
}

/** What JSON leaves out of objects (and writes as `null` in arrays). */
function isSkipped(value: unknown): boolean {
  return value === undefined || typeof value === 'function' || typeof value === 'symbol';
}
