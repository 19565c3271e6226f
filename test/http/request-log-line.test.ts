import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { logRequest, type RequestLogEntry } from '../../src/http/request-log-line.ts';
import { REDACT_PATHS } from '../../src/logger.ts';

/** A destination that keeps every line written to it. */
function sink(): { stream: Writable; lines: string[] } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, callback) {
      lines.push(String(chunk));
      callback();
    },
  });
  // pino writes synchronously to anything with a `write`; keep the raw strings it passes.
  (stream as unknown as { write: (s: string) => boolean }).write = (s: string) => {
    lines.push(s);
    return true;
  };
  return { stream, lines };
}

const FIXED_TIME = () => ',"time":1732240000000';

const entries: RequestLogEntry[] = [
  { method: 'GET', route: '/healthz', url: '/healthz', status: 200, durationMs: 0.42 },
  {
    method: 'POST',
    route: '/api/v1/devices/:id/locations',
    url: '/api/v1/devices/d%22x/locations?a="b"\\',
    status: 201,
    durationMs: 3.1,
  },
  { method: 'GET', route: null, url: '/nope/\u0001\u2028ü', status: 404, durationMs: 0 },
  {
    method: 'DELETE',
    route: '/api/v1/webhooks/:id',
    url: '/api/v1/webhooks/1',
    status: 500,
    durationMs: 12.25,
  },
  { method: 'GET', route: '/x', url: '/x', status: 503, durationMs: Number.NaN },
];

/** The same entry written by pino itself and by the template, through two identical loggers. */
function both(options: pino.LoggerOptions, childOptions?: pino.ChildLoggerOptions) {
  const viaPino = sink();
  const viaTemplate = sink();
  const make = (s: Writable) =>
    pino({ ...options, timestamp: FIXED_TIME }, s).child({ reqId: 'req-1' }, childOptions);
  const a = make(viaPino.stream);
  const b = make(viaTemplate.stream);
  for (const entry of entries) {
    if (entry.status >= 500) a.error(entry, 'request failed');
    else a.info(entry, 'request completed');
    logRequest(b, entry);
  }
  return { pinoLines: viaPino.lines, templateLines: viaTemplate.lines };
}

describe('request log line', () => {
  it('writes byte for byte what pino writes, with our redaction configured', () => {
    const { pinoLines, templateLines } = both({
      level: 'info',
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    });
    assert.equal(templateLines.length, entries.length);
    assert.deepEqual(templateLines, pinoLines);
    const parsed = JSON.parse(templateLines[1] ?? '') as Record<string, unknown>;
    assert.equal(parsed.url, entries[1]?.url);
    assert.equal(parsed.reqId, 'req-1');
    assert.equal(JSON.parse(templateLines[4] ?? '').durationMs, null);
  });

  it('respects the level: at warn only the 5xx lines, at fatal none', () => {
    const warn = both({ level: 'warn' });
    assert.deepEqual(warn.templateLines, warn.pinoLines);
    assert.equal(warn.templateLines.length, 2);
    assert.equal(both({ level: 'fatal' }).templateLines.length, 0);
  });

  it('falls back to pino for configurations the template does not reproduce', () => {
    for (const [options, childOptions] of [
      [{ mixin: () => ({ extra: 1 }) }, undefined],
      [{ messageKey: 'message' }, undefined],
      [{ nestedKey: 'payload' }, undefined],
      [{ formatters: { log: (o: Record<string, unknown>) => ({ ...o, shaped: true }) } }, undefined],
      [{ redact: ['url'] }, undefined],
      [{ serializers: { status: (s: number) => `s${s}` } }, undefined],
      [{}, { msgPrefix: '[http] ' }],
      [{ formatters: { level: (label: string) => ({ severity: label }) } }, undefined],
    ] as Array<[pino.LoggerOptions, pino.ChildLoggerOptions | undefined]>) {
      const { pinoLines, templateLines } = both(options, childOptions);
      assert.deepEqual(templateLines, pinoLines, JSON.stringify(Object.keys(options)));
    }
  });

  it('uses the logger object it is given, not a previous one, after a configuration change', () => {
    const first = both({ level: 'info' });
    const second = both({ level: 'info', serializers: { url: () => '[hidden]' } });
    const third = both({ level: 'info' });
    assert.deepEqual(first.templateLines, first.pinoLines);
    assert.deepEqual(second.templateLines, second.pinoLines);
    assert.match(second.templateLines[0] ?? '', /"url":"\[hidden\]"/);
    assert.deepEqual(third.templateLines, third.pinoLines);
  });
});
