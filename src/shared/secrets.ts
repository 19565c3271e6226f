/**
 * `JWT_SECRET` and `ENCRYPTION_KEY` (contract §0): when unset, generated once and kept in the data
 * folder so restarts keep sessions and encrypted data readable. A warning says so, because several
 * nodes must share one value and only an operator can arrange that.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';

export function resolveSecret(
  configured: string | undefined,
  dataDir: string,
  name: string,
  logger: Logger,
): string {
  if (configured !== undefined) return configured;
  const file = path.join(dataDir, `${name}.secret`);
  try {
    const existing = fs.readFileSync(file, 'utf8').trim();
    if (existing.length >= 32) return existing;
  } catch {
    // Not generated yet.
  }
  fs.mkdirSync(dataDir, { recursive: true });
  const secret = randomBytes(48).toString('base64url');
  fs.writeFileSync(file, `${secret}\n`, { mode: 0o600 });
  logger.warn(
    { file },
    `${name} is not set: generated one and stored it in the data folder; set it explicitly when running several nodes`,
  );
  return secret;
}

/** Constant-time string comparison (lengths may differ; that alone is not secret). */
export function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
