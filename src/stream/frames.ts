/**
 * What the nodes of one deployment tell each other about the live stream (ADR 016), as text frames
 * no larger than the transport carries (PostgreSQL NOTIFY payloads must stay under 8,000 bytes):
 *
 *   messages  {"o":<node>,"k":"m","m":[[<workspace>,<message>],…]}   stream messages to forward
 *   interest  {"o":<node>,"k":"i","w":[<workspace>,…]}               "I have subscribers of these"
 *   dropped   {"o":<node>,"k":"d","w":[<workspace>,…]}               "…no longer of these"
 *   query     {"o":<node>,"k":"q"}                                   "tell me your interests"
 *
 * Many messages share a frame; one frame too large is cut into parts, each
 * `#<node> <seq> <index> <count> <text>` (a JSON frame never starts with `#`). A transport delivers
 * one node's frames in the order they were sent (one connection, one channel), so the parts of a
 * frame arrive one after the other and the receiver keeps one partial frame per node.
 */
import { isStreamMessage, type StreamMessage } from './stream-messages.ts';

export type Frame =
  | { kind: 'messages'; origin: string; messages: Array<[workspaceId: string, message: StreamMessage]> }
  | { kind: 'interest'; origin: string; workspaces: string[] }
  | { kind: 'dropped'; origin: string; workspaces: string[] }
  | { kind: 'query'; origin: string };

const CODES = { messages: 'm', interest: 'i', dropped: 'd', query: 'q' } as const;

/**
 * Encodes queued items into frames of at most `maxBytes` UTF-8 bytes each: items are packed into
 * as few frames as fit, an item alone too large is cut into parts.
 */
export class FrameEncoder {
  readonly #origin: string;
  readonly #maxBytes: number;
  #seq = 0;

  constructor(origin: string, maxBytes: number) {
    if (!/^[0-9a-z]+$/.test(origin)) throw new Error('A node id is lowercase letters and digits');
    // Room for the part header and a few items: a transport this small is a mistake.
    if (maxBytes < 256) throw new Error('Frames must be allowed at least 256 bytes');
    this.#origin = origin;
    this.#maxBytes = maxBytes;
  }

  messages(entries: ReadonlyArray<readonly [string, StreamMessage]>): string[] {
    return this.#pack(
      'messages',
      'm',
      entries.map(([w, m]) => JSON.stringify([w, m])),
    );
  }

  workspaces(kind: 'interest' | 'dropped', workspaceIds: readonly string[]): string[] {
    return this.#pack(
      kind,
      'w',
      workspaceIds.map((w) => JSON.stringify(w)),
    );
  }

  query(): string[] {
    return [`{"o":"${this.#origin}","k":"q"}`];
  }

  /** Frames holding the items (each already JSON), in order. */
  #pack(kind: Frame['kind'], key: string, items: readonly string[]): string[] {
    const head = `{"o":"${this.#origin}","k":"${CODES[kind]}","${key}":[`;
    const tail = ']}';
    const fixed = Buffer.byteLength(head) + tail.length;
    const frames: string[] = [];
    let batch: string[] = [];
    let bytes = fixed;
    const close = () => {
      if (batch.length > 0) frames.push(head + batch.join(',') + tail);
      batch = [];
      bytes = fixed;
    };
    for (const item of items) {
      const size = Buffer.byteLength(item) + (batch.length > 0 ? 1 : 0);
      if (bytes + size > this.#maxBytes && batch.length > 0) close();
      const alone = fixed + Buffer.byteLength(item);
      if (alone > this.#maxBytes) {
        frames.push(...this.#parts(head + item + tail));
        continue;
      }
      batch.push(item);
      bytes += Buffer.byteLength(item) + (batch.length > 1 ? 1 : 0);
    }
    close();
    return frames;
  }

  /** One oversized frame as parts, cut between UTF-8 characters (never inside one). */
  #parts(frame: string): string[] {
    const seq = this.#seq++;
    const bytes = Buffer.from(frame, 'utf8');
    // The header grows with the part count; 32 bytes hold any realistic one.
    const room = this.#maxBytes - (this.#origin.length + 32);
    const pieces: string[] = [];
    let start = 0;
    while (start < bytes.length) {
      let end = Math.min(start + room, bytes.length);
      // Back off continuation bytes (10xxxxxx): a cut there would split a character.
      while (end < bytes.length && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
      pieces.push(bytes.toString('utf8', start, end));
      start = end;
    }
    return pieces.map((piece, i) => `#${this.#origin} ${seq} ${i} ${pieces.length} ${piece}`);
  }
}

interface Partial {
  seq: string;
  count: number;
  pieces: string[];
}

/** Turns frames back into what they say; parts are put together first. Malformed frames are dropped. */
export class FrameDecoder {
  readonly #partials = new Map<string, Partial>();

  /** The frame, or undefined for a part of one not complete yet, or for a malformed frame. */
  decode(raw: string): Frame | undefined {
    if (raw.startsWith('#')) return this.#part(raw);
    return parseFrame(raw);
  }

  #part(raw: string): Frame | undefined {
    const match = /^#([0-9a-z]+) (\d+) (\d+) (\d+) /.exec(raw);
    if (!match) return undefined;
    const [head, origin = '', seq = '', index, count] = match;
    const i = Number(index);
    const n = Number(count);
    let partial = this.#partials.get(origin);
    // A new frame of this node replaces an unfinished one (whose other parts are lost).
    if (!partial || partial.seq !== seq) {
      if (i !== 0) {
        this.#partials.delete(origin);
        return undefined;
      }
      partial = { seq, count: n, pieces: [] };
      this.#partials.set(origin, partial);
    }
    if (i !== partial.pieces.length || n !== partial.count) {
      this.#partials.delete(origin);
      return undefined;
    }
    partial.pieces.push(raw.slice(head.length));
    if (partial.pieces.length < partial.count) return undefined;
    this.#partials.delete(origin);
    return parseFrame(partial.pieces.join(''));
  }
}

function parseFrame(raw: string): Frame | undefined {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const f = value as { o?: unknown; k?: unknown; m?: unknown; w?: unknown };
  if (typeof f.o !== 'string') return undefined;
  const origin = f.o;
  switch (f.k) {
    case 'q':
      return { kind: 'query', origin };
    case 'i':
    case 'd': {
      if (!Array.isArray(f.w) || !f.w.every((w) => typeof w === 'string')) return undefined;
      return { kind: f.k === 'i' ? 'interest' : 'dropped', origin, workspaces: f.w as string[] };
    }
    case 'm': {
      if (!Array.isArray(f.m)) return undefined;
      const messages: Array<[string, StreamMessage]> = [];
      for (const entry of f.m) {
        if (!Array.isArray(entry) || typeof entry[0] !== 'string' || !isStreamMessage(entry[1])) continue;
        messages.push([entry[0], entry[1]]);
      }
      return { kind: 'messages', origin, messages };
    }
    default:
      return undefined;
  }
}
