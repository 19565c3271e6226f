/**
 * The per-request log line, written without pino's generic serialiser (ADR 012). Every request
 * logs one line of the same five fields; pino walks the object, looks up a serialiser and a
 * stringifier per key and escapes each string: the largest piece of JavaScript per request
 * (ADR 012). This writes the bytes pino would write — level, time, the request logger's bindings
 * (pid, hostname, reqId), the fields, the message — from a template, escaping only the URL (the one
 * field a caller controls) and the route (once per route template, cached).
 *
 * It falls back to pino whenever the logger is configured in a way the template does not
 * reproduce (a mixin, log formatters, a custom message key, a stream that wants metadata), so the
 * output is pino's in every case; `test/http/request-log-line.test.ts` compares the two byte for byte.
 */
import type { FastifyBaseLogger } from 'fastify';
import { type Logger, pino } from 'pino';

export interface RequestLogEntry {
  method: string;
  route: string | null;
  url: string;
  status: number;
  durationMs: number;
}

// pino's internals are symbol-keyed properties of the logger; these are the ones the template reads
// (`msgPrefixSym` is missing from pino's type of `symbols`, hence the widening).
const symbols = pino.symbols as unknown as Record<string, symbol>;
const sym = (name: string): symbol => {
  const found = symbols[name];
  if (found === undefined) throw new Error(`pino.symbols.${name} is missing`);
  return found;
};
const CHINDINGS = sym('chindingsSym');
const LEVEL_PREFIX = sym('lsCacheSym');
const STREAM = sym('streamSym');
const TIME = sym('timeSym');
const END = sym('endSym');
const SERIALIZERS = sym('serializersSym');
const STRINGIFIERS = sym('stringifiersSym');
const FORMATTERS = sym('formattersSym');
const MSG_PREFIX = sym('msgPrefixSym');
const NEEDS_METADATA = sym('needsMetadataGsym');
const WILDCARD_FIRST = sym('wildcardFirstSym');

type Internals = Record<symbol, unknown>;
type Stream = { write(line: string): unknown } & Internals;

/** The keys the template writes: a serialiser or a redaction stringifier on any means pino's way. */
const KEYS = ['method', 'route', 'url', 'status', 'durationMs', 'msg'] as const;

const INFO = 30;
const ERROR = 50;
const routeJson = new Map<string | null, string>();

/** Whether the template writes exactly what pino would for this logger. */
function templatable(log: Internals): boolean {
  const hooks = log[sym('hooksSym')] as { streamWrite?: unknown; logMethod?: unknown };
  const formatters = log[FORMATTERS] as { log?: unknown };
  const serializers = log[SERIALIZERS] as Record<string, unknown>;
  const stringifiers = log[STRINGIFIERS] as Internals & Record<string, unknown>;
  return (
    !log[sym('mixinSym')] &&
    log[sym('messageKeySym')] === 'msg' &&
    !log[sym('nestedKeySym')] &&
    !formatters.log &&
    !hooks.streamWrite &&
    !hooks.logMethod &&
    (log[STREAM] as Stream)[NEEDS_METADATA] !== true &&
    !stringifiers[WILDCARD_FIRST] &&
    !KEYS.some((k) => serializers[k] || stringifiers[k])
  );
}

// Fastify's request loggers are children of one logger and share its configuration objects (a
// child given its own serialisers, redaction or formatters gets new ones), so the answer is kept
// for the last set of objects seen; the prefix is a plain per-child value and is read each time.
let lastSeen:
  | { serializers: unknown; stringifiers: unknown; formatters: unknown; answer: boolean }
  | undefined;

function canTemplate(log: Internals): boolean {
  if (log[STREAM] === undefined || log[MSG_PREFIX]) return false;
  const serializers = log[SERIALIZERS];
  const stringifiers = log[STRINGIFIERS];
  const formatters = log[FORMATTERS];
  if (
    lastSeen === undefined ||
    lastSeen.serializers !== serializers ||
    lastSeen.stringifiers !== stringifiers ||
    lastSeen.formatters !== formatters
  ) {
    lastSeen = { serializers, stringifiers, formatters, answer: templatable(log) };
  }
  return lastSeen.answer;
}

/** Logs one request line at info (error for 5xx), as `log.info(entry, 'request completed')` would. */
export function logRequest(log: FastifyBaseLogger, entry: RequestLogEntry): void {
  const failed = entry.status >= 500;
  const msg = failed ? 'request failed' : 'request completed';
  const levelVal = (log as Partial<Logger>).levelVal;
  const internals = log as unknown as Internals;
  if (levelVal === undefined || !canTemplate(internals)) {
    if (failed) log.error(entry, msg);
    else log.info(entry, msg);
    return;
  }
  const level = failed ? ERROR : INFO;
  if (levelVal > level) return;
  let route = routeJson.get(entry.route);
  if (route === undefined) {
    route = JSON.stringify(entry.route);
    routeJson.set(entry.route, route);
  }
  const durationMs = Number.isFinite(entry.durationMs) ? entry.durationMs : null;
  const prefix = (internals[LEVEL_PREFIX] as Record<number, string>)[level];
  const time = (internals[TIME] as () => string)();
  (internals[STREAM] as Stream).write(
    `${prefix}${time}${internals[CHINDINGS] as string},"method":${JSON.stringify(entry.method)},"route":${route},"url":${JSON.stringify(entry.url)},"status":${entry.status},"durationMs":${durationMs},"msg":"${msg}"${internals[END] as string}`,
  );
}
