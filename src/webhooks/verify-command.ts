/**
 * `cli verify-webhook`: checks a stored delivery request against its secret, the way a receiver
 * must (seed §6.2): the HMAC over the raw body bytes, read unchanged from a file or stdin (a
 * trailing newline is part of the body). Needs no configuration and no database.
 */
import { readFile } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { verifySignature } from './signature.ts';

export interface VerifyFlags {
  secret?: string | undefined;
  signature?: string | undefined;
  'body-file'?: string | undefined;
}

export interface VerifyIo {
  stdin: Readable;
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  env: Record<string, string | undefined>;
}

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  return Buffer.concat(chunks);
}

/** Prints `valid` (exit 0) or `invalid` (exit 1); a usage problem exits 2. */
export async function verifyWebhookCommand(flags: VerifyFlags, io: VerifyIo): Promise<number> {
  // The secret may come from the environment so it stays out of `ps` and shell history.
  const secret = flags.secret ?? io.env.WEBHOOK_SECRET;
  if (!secret || !flags.signature) {
    io.stderr.write(
      'Usage: verify-webhook --signature "sha256=<hex>" [--secret whsec_… | $WEBHOOK_SECRET] [--body-file FILE | < body]\n',
    );
    return 2;
  }
  const body = flags['body-file'] ? await readFile(flags['body-file']) : await readAll(io.stdin);
  const valid = verifySignature(body, flags.signature, secret);
  io.stdout.write(valid ? 'valid\n' : 'invalid\n');
  return valid ? 0 : 1;
}
