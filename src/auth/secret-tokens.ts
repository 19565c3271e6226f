/**
 * API keys (`gf_live_`) and device tokens (`gf_dev_`, contract §2.3b): the prefix and 32 random
 * bytes; only their SHA-256 is stored (see shared/random-secrets.ts). The prefixes tell the
 * authenticator which table to search before any lookup.
 */
import { randomToken, sha256Hex } from '../shared/random-secrets.ts';

export const API_KEY_PREFIX = 'gf_live_';
export const DEVICE_TOKEN_PREFIX = 'gf_dev_';

/** How many leading characters identify a secret in lists (never enough to use it). */
const SHOWN_PREFIX_LENGTH = 12;

function newSecret(prefix: string): { key: string; prefix: string; hash: string } {
  const key = `${prefix}${randomToken(32)}`;
  return { key, prefix: key.slice(0, SHOWN_PREFIX_LENGTH), hash: sha256Hex(key) };
}

export function newApiKey(): { key: string; prefix: string; hash: string } {
  return newSecret(API_KEY_PREFIX);
}

export function newDeviceToken(): { key: string; prefix: string; hash: string } {
  return newSecret(DEVICE_TOKEN_PREFIX);
}

export function looksLikeApiKey(value: string): boolean {
  return value.startsWith(API_KEY_PREFIX);
}

/** The exact shape: anything else is refused without a lookup, and never enters the cache. */
const DEVICE_TOKEN_SHAPE = /^gf_dev_[A-Za-z0-9_-]{43}$/;

export function looksLikeDeviceToken(value: string): boolean {
  return value.startsWith(DEVICE_TOKEN_PREFIX);
}

export function hasDeviceTokenShape(value: string): boolean {
  return DEVICE_TOKEN_SHAPE.test(value);
}
