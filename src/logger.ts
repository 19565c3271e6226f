/** The process logger (pino). Credentials are redacted wherever they might be logged by hand. */
import { type Logger, pino } from 'pino';

// Explicit paths only: wildcard paths (`*.password`) make pino test every key of every line against
// the patterns (ADR 012, "Alternatives considered"), and request lines never carry headers or
// bodies in the first place.
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers.cookie',
  'headers.authorization',
  'headers["x-api-key"]',
  'password',
  'token',
  'refresh_token',
  'access_token',
  'secret',
  'key',
  'body.password',
  'body.token',
  'body.refresh_token',
  'body.secret',
];

/**
 * Lines are gathered and written about 4 KiB at a time, synchronously (pino's own default is a
 * synchronous write per line). Every request logs a line; an asynchronous write per line is a
 * thread-pool round trip, a synchronous one a system call per request; batching makes it one per
 * ~4 KiB (ADR 012). A line waits at most
 * FLUSH_AFTER_MS when traffic is low, and whatever is pending is written when the process exits
 * (including after an uncaught exception); only a SIGKILL can lose it. A blocked stdout (a stalled log
 * collector) blocks the process rather than growing memory without bound, as pino's default does.
 */
const BATCH_CHARS = 4096;

/** A pino destination (sonic-boom) writing synchronously. */
interface LineSink {
  write(data: string): unknown;
}
const FLUSH_AFTER_MS = 100;

export class BatchedDestination {
  private parts: string[] = [];
  private size = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly out: LineSink;

  constructor(out: LineSink) {
    this.out = out;
    process.once('exit', () => this.flushSync());
  }

  write(line: string): void {
    this.parts.push(line);
    this.size += line.length;
    if (this.size >= BATCH_CHARS) this.flushSync();
    else if (this.timer === undefined) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.flushSync();
      }, FLUSH_AFTER_MS);
      this.timer.unref();
    }
  }

  /** pino's `logger.flush()` lands here. */
  flush(callback?: (error?: Error) => void): void {
    this.flushSync();
    callback?.();
  }

  flushSync(): void {
    if (this.size === 0) return;
    const data = this.parts.length === 1 ? (this.parts[0] ?? '') : this.parts.join('');
    this.parts = [];
    this.size = 0;
    this.out.write(data);
  }
}

export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  const options = { level, redact: { paths: REDACT_PATHS, censor: '[redacted]' } };
  if (destination) return pino(options, destination);
  return pino(options, new BatchedDestination(pino.destination({ dest: 1, sync: true })));
}
