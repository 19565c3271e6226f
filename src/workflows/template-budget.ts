/**
 * The bounds of one template render (contract §6 "Rendering is bounded", ADR 014). The writer
 * charges the budget as it goes, before each piece of output is added and before each section
 * body is rendered, so a template that would exceed a bound stops there: a section nested four
 * levels deep over 400 items fails after 10,000 iterations instead of rendering for an hour.
 *
 * Two bounds are the contract's: output bytes (UTF-8, after escaping) and section iterations.
 * The third, rendering steps, is internal: it keeps the work between outputs and iterations
 * small (thousands of tags visited in each iteration, long dotted names looked up through deep
 * sections), so that no render within the first two costs more than a few milliseconds of the
 * event loop. ADR 014 has the figures that chose it.
 */

/** At most 64 KiB of output per render (UTF-8 bytes, after the target's escaping). */
export const MAX_TEMPLATE_OUTPUT_BYTES = 65_536;
/** At most 10,000 section bodies rendered per render (items and truthy values, nested ones included). */
export const MAX_TEMPLATE_SECTION_ITERATIONS = 10_000;
/** At most this many tags visited and property lookups made per render. */
export const MAX_TEMPLATE_STEPS = 100_000;

export type TemplateBound = 'output' | 'iterations' | 'steps';

const MESSAGES: Record<TemplateBound, string> = {
  output: `Template output exceeds ${MAX_TEMPLATE_OUTPUT_BYTES} bytes (64 KiB)`,
  iterations: `Template exceeds ${MAX_TEMPLATE_SECTION_ITERATIONS} section iterations`,
  steps: `Template exceeds ${MAX_TEMPLATE_STEPS} rendering steps (tags visited and names looked up)`,
};

/** A render stopped at a bound. Not worth retrying: the same template and event stop alike. */
export class TemplateBudgetError extends Error {
  override readonly name = 'TemplateBudgetError';
  readonly bound: TemplateBound;

  constructor(bound: TemplateBound) {
    super(MESSAGES[bound]);
    this.bound = bound;
  }
}

/** What one render has spent; each charge throws `TemplateBudgetError` once a bound is passed. */
export class RenderBudget {
  private bytes = 0;
  private iterations = 0;
  private steps = 0;

  /** One section body about to be rendered. */
  iterate(): void {
    this.iterations += 1;
    if (this.iterations > MAX_TEMPLATE_SECTION_ITERATIONS) throw new TemplateBudgetError('iterations');
  }

  step(count = 1): void {
    this.steps += count;
    if (this.steps > MAX_TEMPLATE_STEPS) throw new TemplateBudgetError('steps');
  }

  /** Output bytes left. */
  room(): number {
    return MAX_TEMPLATE_OUTPUT_BYTES - this.bytes;
  }

  /** Refuses a text longer than the output left, without measuring it (a value may be megabytes). */
  fit(text: string): string {
    // A UTF-16 code unit is at least one UTF-8 byte.
    if (text.length > this.room()) throw new TemplateBudgetError('output');
    return text;
  }

  /** Counts `text` as output; returns it. */
  write(text: string): string {
    this.fit(text);
    this.bytes += utf8Length(text);
    if (this.bytes > MAX_TEMPLATE_OUTPUT_BYTES) throw new TemplateBudgetError('output');
    return text;
  }
}

/**
 * The UTF-8 size of `text` as `TextEncoder` writes it: a lone surrogate becomes U+FFFD (3
 * bytes). Counted without encoding: this runs in the browser too, where there is no `Buffer`.
 */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i += 1) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    else if (unit >= 0xd800 && unit <= 0xdbff && isLowSurrogate(text.charCodeAt(i + 1))) {
      bytes += 4;
      i += 1;
    } else bytes += 3;
  }
  return bytes;
}

const isLowSurrogate = (unit: number): boolean => unit >= 0xdc00 && unit <= 0xdfff;
