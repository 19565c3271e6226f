/**
 * Secrets stored at rest (webhook signing secrets, workflow credentials) are sealed with
 * AES-256-GCM under a key derived from `ENCRYPTION_KEY` (contract §0). The stored form is
 * `v1.<iv>.<tag>.<ciphertext>` in base64url, so a later key rotation can add `v2` beside it.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

const VERSION = 'v1';

export class SecretBox {
  private readonly key: Buffer;

  /** `encryptionKey` is any string of at least 32 characters; SHA-256 turns it into a 256-bit key. */
  constructor(encryptionKey: string) {
    this.key = createHash('sha256').update(`secret-box:${encryptionKey}`).digest();
  }

  seal(plaintext: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    const tag = cipher.getAuthTag();
    return [VERSION, iv.toString('base64url'), tag.toString('base64url'), body.toString('base64url')].join(
      '.',
    );
  }

  /** Throws when the value was sealed under another key or altered. */
  open(sealed: string): string {
    const [version, iv, tag, body] = sealed.split('.');
    if (version !== VERSION || iv === undefined || tag === undefined || body === undefined) {
      throw new Error('not a sealed secret');
    }
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString(
      'utf8',
    );
  }
}
