/** API keys: `gf_live_` and 32 random bytes; only their SHA-256 is stored (see shared/random-secrets.ts). */
import { randomToken, sha256Hex } from '../shared/random-secrets.ts';

export const API_KEY_PREFIX = 'gf_live_';

export function newApiKey(): { key: string; prefix: string; hash: string } {
  const key = `${API_KEY_PREFIX}${randomToken(32)}`;
  return { key, prefix: key.slice(0, 12), hash: sha256Hex(key) };
}

export function looksLikeApiKey(value: string): boolean {
  return value.startsWith(API_KEY_PREFIX);
}
