/**
 * High-entropy secrets handed to users (API keys, e-mail and reset tokens). Only their SHA-256 is
 * stored: with 256 random bits a fast hash is as safe as a slow one and costs microseconds per
 * request.
 */
import { createHash, randomBytes } from 'node:crypto';

export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

export function sha256Hex(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

export const API_KEY_PREFIX = 'gf_live_';

export function newApiKey(): { key: string; prefix: string; hash: string } {
  const key = `${API_KEY_PREFIX}${randomToken(32)}`;
  return { key, prefix: key.slice(0, 12), hash: sha256Hex(key) };
}

export function looksLikeApiKey(value: string): boolean {
  return value.startsWith(API_KEY_PREFIX);
}
