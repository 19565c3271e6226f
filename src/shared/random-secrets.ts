/**
 * High-entropy secrets handed to users (API keys, e-mail, reset and invitation tokens). Only their
 * SHA-256 is stored: with 256 random bits a fast hash is as safe as a slow one and costs
 * microseconds per request.
 */
import { createHash, randomBytes } from 'node:crypto';

export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

export function sha256Hex(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}
