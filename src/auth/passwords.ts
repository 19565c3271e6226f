/**
 * Password hashing with argon2id, built into Node 24 (`crypto.argon2`), at OWASP's recommended
 * minimum (m = 19 MiB, t = 2, p = 1). Hashes are PHC strings so parameters can be raised later and
 * old hashes still verify. See docs/decisions/004-identity.md.
 */
import { argon2, randomBytes, timingSafeEqual } from 'node:crypto';

export interface PasswordHashParams {
  memoryKiB: number;
  passes: number;
  parallelism: number;
}

export const OWASP_ARGON2ID: PasswordHashParams = { memoryKiB: 19_456, passes: 2, parallelism: 1 };

function derive(password: string, salt: Buffer, params: PasswordHashParams): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    argon2(
      'argon2id',
      {
        message: password,
        nonce: salt,
        parallelism: params.parallelism,
        tagLength: 32,
        memory: params.memoryKiB,
        passes: params.passes,
      },
      (error, key) => (error ? reject(error) : resolve(key)),
    );
  });
}

export async function hashPassword(
  password: string,
  params: PasswordHashParams = OWASP_ARGON2ID,
): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, params);
  return `$argon2id$v=19$m=${params.memoryKiB},t=${params.passes},p=${params.parallelism}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

const PHC = /^\$argon2id\$v=19\$m=(\d+),t=(\d+),p=(\d+)\$([A-Za-z0-9_-]+)\$([A-Za-z0-9_-]+)$/;

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const match = PHC.exec(stored);
  if (!match) return false;
  const params = { memoryKiB: Number(match[1]), passes: Number(match[2]), parallelism: Number(match[3]) };
  const expected = Buffer.from(match[5] ?? '', 'base64url');
  const actual = await derive(password, Buffer.from(match[4] ?? '', 'base64url'), params);
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** A hash of a random password: verifying against it costs the same as a real one (no user enumeration by timing). */
let dummyHash: Promise<string> | undefined;
export function dummyPasswordHash(params: PasswordHashParams): Promise<string> {
  dummyHash ??= hashPassword(randomBytes(16).toString('hex'), params);
  return dummyHash;
}
