/** The process logger (pino). Credentials are redacted wherever they might be logged by hand. */
import { type Logger, pino } from 'pino';

export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers.cookie',
  '*.password',
  '*.token',
  '*.refresh_token',
  '*.access_token',
  '*.secret',
  '*.key',
];

export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  const options = { level, redact: { paths: REDACT_PATHS, censor: '[redacted]' } };
  return destination ? pino(options, destination) : pino(options, pino.destination({ sync: false }));
}
