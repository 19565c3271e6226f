/**
 * Mustache's template parser (mustache.js 4.2.0, `parseTemplate`, MIT) with a scanner that is
 * linear in the template's length. The package's own scanner matches unanchored regular
 * expressions against the rest of the template: `/\s*\}\}/` backtracks over every run of
 * whitespace inside a tag (a 20,000-character template with one such run took 470 ms to parse),
 * and a failed `scan` searches the whole remainder (quadratic under delimiters without `{`).
 * Here each search is a literal `indexOf` from the current position and each `scan` looks only
 * at the current position, so no character is examined more than a few times.
 *
 * Everything else is the package's algorithm, step for step: the same tokens (standalone lines,
 * delimiter changes, partial indentation) and the same error messages, so `Mustache.Writer`
 * renders these tokens as it renders its own (`templates-parser.test.ts` checks both on random
 * templates).
 */

/** A token as Mustache's writer expects it: `[type, value, start, end, …]` (see mustache.js). */
export type TemplateToken = unknown[] & [string, string, number, number, ...unknown[]];

/** Mustache's default delimiters. */
const DEFAULT_TAGS: readonly [string, string] = ['{{', '}}'];
/** The characters that give a tag its type (`{{#x}}`, `{{^x}}`, …); any other tag is a `name`. */
const TAG_TYPES = new Set(['#', '^', '/', '>', '{', '&', '=', '!']);
const SPACE = /\s/;
const SPACES = /\s+/;
/** Whitespace up to and including the end of its line; characters that are not whitespace. */
const BLANK_RUN = /[^\S\n]*\n?/y;
const WORD_RUN = /\S+/y;

const isSpace = (char: string | undefined): boolean => char !== undefined && SPACE.test(char);

/** Reads the template from left to right; every method moves `pos` forward only. */
class Scanner {
  pos = 0;
  private readonly text: string;

  constructor(text: string) {
    this.text = text;
  }

  eos(): boolean {
    return this.pos >= this.text.length;
  }

  /** Skips whitespace. */
  skipSpace(): void {
    while (isSpace(this.text[this.pos])) this.pos += 1;
  }

  /** Whitespace then `literal` at the current position: consumed and true, or nothing and false. */
  scanLiteral(literal: string, leadingSpace: boolean): boolean {
    let at = this.pos;
    if (leadingSpace) while (isSpace(this.text[at])) at += 1;
    if (!this.text.startsWith(literal, at)) return false;
    this.pos = at + literal.length;
    return true;
  }

  /**
   * The text before the first place where `literal` (preceded by any whitespace, when
   * `leadingSpace`) starts; the rest of the template if it never does. The first match of
   * `/\s*L/` starts where the run of whitespace before the first `L` starts, because `L` begins
   * with a character that is not whitespace (delimiters never contain any).
   */
  scanUntil(literal: string, leadingSpace: boolean): string {
    const found = this.text.indexOf(literal, this.pos);
    let end = found === -1 ? this.text.length : found;
    if (found !== -1 && leadingSpace) while (end > this.pos && isSpace(this.text[end - 1])) end -= 1;
    const skipped = this.text.slice(this.pos, end);
    this.pos = end;
    return skipped;
  }
}

/**
 * The token tree of `template`, exactly as `new Mustache.Writer().parse(template)` gives it;
 * throws the same `Error` (e.g. `Unclosed tag at 12`) where that would.
 */
export function parseTemplate(template: string): TemplateToken[] {
  if (!template) return [];
  const sections: TemplateToken[] = [];
  // Sparse: stripSpace deletes the whitespace of standalone lines, squashTokens skips the holes.
  const tokens: (TemplateToken | undefined)[] = [];
  let spaces: number[] = [];
  let hasTag = false;
  let nonSpace = false;
  let lineHasNonSpace = false;
  let indentation = '';
  let tagIndex = 0;
  let [open, close] = DEFAULT_TAGS;

  // A line holding only tags and whitespace ("standalone") leaves no whitespace in the output.
  const stripSpace = (): void => {
    if (hasTag && !nonSpace) {
      for (let index = spaces.pop(); index !== undefined; index = spaces.pop()) delete tokens[index];
    } else {
      spaces = [];
    }
    hasTag = false;
    nonSpace = false;
  };

  const setTags = (value: string): void => {
    const tags = value.split(SPACES, 2);
    const [nextOpen, nextClose] = tags;
    if (tags.length !== 2 || nextOpen === undefined || nextClose === undefined) {
      throw new Error(`Invalid tags: ${tags.join(',')}`);
    }
    open = nextOpen;
    close = nextClose;
  };

  const scanner = new Scanner(template);
  while (!scanner.eos()) {
    const start = scanner.pos;
    const text = scanner.scanUntil(open, false);
    // Mustache makes a token of each character; runs of whitespace (ending at the end of a line)
    // and of other characters give the same tokens once squashed, with far fewer of them.
    for (let at = 0; at < text.length; ) {
      const blank = isSpace(text[at]);
      const run = blank ? BLANK_RUN : WORD_RUN;
      run.lastIndex = at;
      run.test(text);
      const end = run.lastIndex;
      const value = text.slice(at, end);
      if (blank) {
        spaces.push(tokens.length);
        indentation += value;
      } else {
        nonSpace = true;
        lineHasNonSpace = true;
        indentation += ' '.repeat(value.length);
      }
      tokens.push(['text', value, start + at, start + end]);
      at = end;
      if (value.endsWith('\n')) {
        stripSpace();
        indentation = '';
        tagIndex = 0;
        lineHasNonSpace = false;
      }
    }

    const tagStart = scanner.pos;
    if (!scanner.scanLiteral(open, false)) break;
    scanner.skipSpace();
    hasTag = true;

    const mark = template[scanner.pos];
    let type = mark !== undefined && TAG_TYPES.has(mark) ? mark : 'name';
    if (type !== 'name') scanner.pos += 1;
    scanner.skipSpace();

    let value: string;
    if (type === '=') {
      value = scanner.scanUntil('=', true);
      scanner.scanLiteral('=', true);
      scanner.scanUntil(close, true);
    } else if (type === '{') {
      value = scanner.scanUntil(`}${close}`, true);
      scanner.scanLiteral('}', true);
      scanner.scanUntil(close, true);
      type = '&';
    } else {
      value = scanner.scanUntil(close, true);
    }
    if (!scanner.scanLiteral(close, true)) throw new Error(`Unclosed tag at ${scanner.pos}`);

    const token: TemplateToken =
      type === '>'
        ? [type, value, tagStart, scanner.pos, indentation, tagIndex, lineHasNonSpace]
        : [type, value, tagStart, scanner.pos];
    tagIndex += 1;
    tokens.push(token);

    if (type === '#' || type === '^') {
      sections.push(token);
    } else if (type === '/') {
      const section = sections.pop();
      if (!section) throw new Error(`Unopened section "${value}" at ${tagStart}`);
      if (section[1] !== value) throw new Error(`Unclosed section "${section[1]}" at ${tagStart}`);
    } else if (type === 'name' || type === '&') {
      nonSpace = true;
    } else if (type === '=') {
      setTags(value);
    }
  }

  stripSpace();
  const unclosed = sections.pop();
  if (unclosed) throw new Error(`Unclosed section "${unclosed[1]}" at ${scanner.pos}`);
  return nestTokens(squashTokens(tokens));
}

/** Joins consecutive text tokens into one. */
function squashTokens(tokens: readonly (TemplateToken | undefined)[]): TemplateToken[] {
  const squashed: TemplateToken[] = [];
  let last: TemplateToken | undefined;
  for (const token of tokens) {
    if (!token) continue;
    if (token[0] === 'text' && last?.[0] === 'text') {
      last[1] += token[1];
      last[3] = token[3];
    } else {
      squashed.push(token);
      last = token;
    }
  }
  return squashed;
}

/**
 * The tree: a section token gets its body's tokens at [4] and the start of its closing tag at
 * [5]; closing tags themselves are dropped.
 */
function nestTokens(tokens: readonly TemplateToken[]): TemplateToken[] {
  const nested: TemplateToken[] = [];
  const sections: TemplateToken[] = [];
  let collector = nested;
  for (const token of tokens) {
    switch (token[0]) {
      case '#':
      case '^': {
        collector.push(token);
        sections.push(token);
        const body: TemplateToken[] = [];
        token[4] = body;
        collector = body;
        break;
      }
      case '/': {
        const section = sections.pop() as TemplateToken;
        section[5] = token[2];
        const parent = sections.at(-1);
        collector = parent ? (parent[4] as TemplateToken[]) : nested;
        break;
      }
      default:
        collector.push(token);
    }
  }
  return nested;
}
