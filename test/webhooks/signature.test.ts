import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { verify as octokitVerify } from '@octokit/webhooks-methods';
import fc from 'fast-check';
import * as packageRoot from 'geofence-service';
import { generateWebhookSecret, signBody, verifySignature } from '../../src/webhooks/signature.ts';

const SECRET = 'whsec_test-secret';
const BODY = '{"id":"0190","event":"geofence.enter","data":{"geofence_name":"Zürich HQ"}}';

describe('signBody', () => {
  it('is sha256= followed by the hex HMAC-SHA256 of the raw body', () => {
    const expected = createHmac('sha256', SECRET).update(Buffer.from(BODY, 'utf8')).digest('hex');
    assert.equal(signBody(BODY, SECRET), `sha256=${expected}`);
  });

  it('signs string and byte bodies identically (UTF-8)', () => {
    assert.equal(signBody(Buffer.from(BODY, 'utf8'), SECRET), signBody(BODY, SECRET));
    assert.equal(signBody(new TextEncoder().encode(BODY), SECRET), signBody(BODY, SECRET));
  });

  it('signs the empty body of a GET delivery', () => {
    const expected = createHmac('sha256', SECRET).update('').digest('hex');
    assert.equal(signBody('', SECRET), `sha256=${expected}`);
  });
});

describe('an independent verifier (@octokit/webhooks-methods) agrees', () => {
  it('accepts signBody output', async () => {
    assert.equal(await octokitVerify(SECRET, BODY, signBody(BODY, SECRET)), true);
  });

  it('rejects the signature after one byte of the body changes', async () => {
    const signature = signBody(BODY, SECRET);
    const changed = BODY.replace('enter', 'entEr');
    assert.equal(await octokitVerify(SECRET, changed, signature), false);
  });

  it('agrees on random bodies and secrets', async () => {
    await fc.assert(
      // octokit refuses an empty payload outright, hence minLength 1.
      fc.asyncProperty(
        fc.string({ unit: 'grapheme', minLength: 1 }),
        fc.string({ minLength: 1 }),
        async (body, secret) => {
          const signature = signBody(body, secret);
          assert.equal(await octokitVerify(secret, body, signature), true);
          assert.equal(verifySignature(body, signature, secret), true);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('verifySignature', () => {
  const good = signBody(BODY, SECRET);

  it('accepts the right signature over the raw body', () => {
    assert.equal(verifySignature(BODY, good, SECRET), true);
    assert.equal(verifySignature(Buffer.from(BODY), good, SECRET), true);
  });

  it('accepts upper-case hex', () => {
    assert.equal(verifySignature(BODY, `sha256=${good.slice(7).toUpperCase()}`, SECRET), true);
  });

  it('rejects another secret, another body, and a re-serialised JSON body', () => {
    assert.equal(verifySignature(BODY, good, 'whsec_other'), false);
    assert.equal(verifySignature(`${BODY} `, good, SECRET), false);
    assert.equal(verifySignature(JSON.stringify(JSON.parse(BODY), null, 2), good, SECRET), false);
  });

  it('rejects a missing header or prefix and malformed hex without throwing', () => {
    const hex = good.slice('sha256='.length);
    for (const header of [
      undefined,
      null,
      '',
      hex,
      `sha1=${hex}`,
      `SHA256=${hex}`,
      'sha256=',
      `sha256=${hex.slice(0, 63)}`,
      `sha256=${hex}00`,
      `sha256=${hex.slice(0, 63)}g`,
      `sha256=${hex.slice(0, 32)}`,
    ]) {
      assert.equal(verifySignature(BODY, header, SECRET), false, String(header));
    }
  });

  it('rejects every single-bit change of the signature', () => {
    const bytes = Buffer.from(good.slice(7), 'hex');
    for (let i = 0; i < bytes.length * 8; i += 1) {
      const flipped = Buffer.from(bytes);
      flipped[i >> 3] = (flipped[i >> 3] ?? 0) ^ (1 << (i & 7));
      assert.equal(verifySignature(BODY, `sha256=${flipped.toString('hex')}`, SECRET), false);
    }
  });

  it('never throws on arbitrary headers', () => {
    fc.assert(
      fc.property(fc.string(), (header) => {
        assert.equal(verifySignature(BODY, header, SECRET), header === good || header.toLowerCase() === good);
      }),
    );
  });
});

describe('the package entry point (src/index.ts)', () => {
  it("is importable by the package's own name and exports the same functions", () => {
    assert.equal(packageRoot.verifySignature, verifySignature);
    assert.equal(packageRoot.signBody, signBody);
    assert.deepEqual(Object.keys(packageRoot).sort(), ['signBody', 'verifySignature']);
  });

  it('works for a receiver project that links the package (npm link / npm install <folder>)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'receiver-'));
    try {
      mkdirSync(join(dir, 'node_modules'));
      symlinkSync(
        resolve(import.meta.dirname, '../..'),
        join(dir, 'node_modules', 'geofence-service'),
        'dir',
      );
      writeFileSync(join(dir, 'package.json'), '{"type":"module"}');
      const signature = signBody(BODY, SECRET);
      const script = `import { verifySignature } from 'geofence-service';
        const [body, header, secret] = process.argv.slice(2);
        console.log(verifySignature(body, header, secret), verifySignature(body + ' ', header, secret));`;
      writeFileSync(join(dir, 'receiver.mjs'), script);
      const out = execFileSync(process.execPath, ['receiver.mjs', BODY, signature, SECRET], {
        cwd: dir,
        encoding: 'utf8',
      });
      assert.equal(out.trim(), 'true false');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('generateWebhookSecret', () => {
  it('is whsec_ + 32 random bytes in base64url', () => {
    const secret = generateWebhookSecret();
    assert.match(secret, /^whsec_[A-Za-z0-9_-]{43}$/);
    assert.equal(Buffer.from(secret.slice(6), 'base64url').length, 32);
  });

  it('differs every time', () => {
    const secrets = new Set(Array.from({ length: 1000 }, generateWebhookSecret));
    assert.equal(secrets.size, 1000);
  });
});
