/**
 * A statement's text and its bound parameters, built together. Text is appended with `sql` (SQL
 * keywords and our own identifiers, never data); a value only ever with `value` or `tuples`, which
 * bind it and append its placeholder at that point. The placeholders' numbering therefore follows
 * from the order the values are added, whatever the dialect's style, and no value can reach the
 * statement text through this class.
 */
import { CompiledQuery } from 'kysely';

/** `$n` numbers each placeholder (PostgreSQL); `?` binds in order of appearance (SQLite). */
export type PlaceholderStyle = '$n' | '?';

export class StatementBuilder {
  readonly #style: PlaceholderStyle;
  readonly #parameters: unknown[] = [];
  #text = '';

  constructor(style: PlaceholderStyle) {
    this.#style = style;
  }

  /** Appends SQL text: keywords, our own (quoted) identifiers and casts, never a value. */
  sql(text: string): this {
    this.#text += text;
    return this;
  }

  /** Binds `value` and appends its placeholder. */
  value(value: unknown): this {
    this.#parameters.push(value);
    this.#text += this.#style === '?' ? '?' : `$${this.#parameters.length}`;
    return this;
  }

  /** Binds each of `values` and appends their placeholders separated by commas. */
  list(values: readonly unknown[]): this {
    values.forEach((value, i) => {
      if (i > 0) this.#text += ', ';
      this.value(value);
    });
    return this;
  }

  /**
   * Binds `flat`, the values of `rows` rows of `width` columns row after row, and appends
   * `(p, p, …), (p, p, …)`. Made in one go: a SQLite batch binds tens of thousands of values.
   */
  tuples(rows: number, width: number, flat: readonly unknown[]): this {
    if (flat.length !== rows * width) throw new Error(`expected ${rows * width} values, got ${flat.length}`);
    if (this.#style === '?') {
      const tuple = `(${new Array(width).fill('?').join(', ')})`;
      this.#text += new Array(rows).fill(tuple).join(', ');
    } else {
      const first = this.#parameters.length + 1;
      const tuples: string[] = [];
      for (let r = 0; r < rows; r++) {
        const start = first + r * width;
        tuples.push(`(${Array.from({ length: width }, (_v, c) => `$${start + c}`).join(', ')})`);
      }
      this.#text += tuples.join(', ');
    }
    for (const value of flat) this.#parameters.push(value);
    return this;
  }

  compile<R = unknown>(): CompiledQuery<R> {
    return CompiledQuery.raw(this.#text, this.#parameters) as CompiledQuery<R>;
  }
}
