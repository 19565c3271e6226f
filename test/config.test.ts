import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, test } from 'node:test';
import { ConfigError, loadConfig, parseRateLimitRule } from '../src/config.ts';

describe('configuration (contract §0)', () => {
  test('defaults', () => {
    const config = loadConfig({});
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.port, 8080);
    assert.deepEqual(config.database, { kind: 'sqlite', path: path.resolve('data/geofence.db') });
    assert.deepEqual(
      config.webhookRetryScheduleMs,
      [15, 30, 60, 240, 240, 240].map((m) => m * 60_000),
    );
    assert.equal(config.webhookAllowPrivateTargets, false);
    assert.deepEqual(config.loginRateLimit, { points: 5, durationSeconds: 60 });
    assert.deepEqual(config.refreshRateLimit, { points: 10, durationSeconds: 60 });
    assert.equal(config.defaultPlan, 'free');
    assert.equal(config.signupEnabled, true);
    assert.equal(config.requireEmailVerification, false);
    assert.equal(config.publicUrl, 'http://127.0.0.1:8080');
    assert.equal(config.locationRetentionDays, 90);
    assert.equal(config.geofenceIndexCheckMs, 250);
  });

  test('GEOFENCE_INDEX_CHECK_MS: 0..60000 ms', () => {
    assert.equal(loadConfig({ GEOFENCE_INDEX_CHECK_MS: '0' }).geofenceIndexCheckMs, 0);
    assert.equal(loadConfig({ GEOFENCE_INDEX_CHECK_MS: '1000' }).geofenceIndexCheckMs, 1000);
    assert.throws(() => loadConfig({ GEOFENCE_INDEX_CHECK_MS: '60001' }), /GEOFENCE_INDEX_CHECK_MS/);
    assert.throws(() => loadConfig({ GEOFENCE_INDEX_CHECK_MS: 'soon' }), /GEOFENCE_INDEX_CHECK_MS/);
  });

  test('STREAM_KEEPALIVE_INTERVAL: a duration, 15 s by default, at least 100 ms', () => {
    assert.equal(loadConfig({}).streamKeepaliveMs, 15_000);
    assert.equal(loadConfig({ STREAM_KEEPALIVE_INTERVAL: '30s' }).streamKeepaliveMs, 30_000);
    assert.throws(() => loadConfig({ STREAM_KEEPALIVE_INTERVAL: '0s' }), /STREAM_KEEPALIVE_INTERVAL/);
    assert.throws(() => loadConfig({ STREAM_KEEPALIVE_INTERVAL: 'often' }), /STREAM_KEEPALIVE_INTERVAL/);
  });

  test('GEOCODER_URL: unset by default; an http(s) URL, without credentials', () => {
    assert.equal(loadConfig({}).geocoderUrl, undefined);
    for (const url of [
      'https://nominatim.example.org/search',
      'http://127.0.0.1:7070/search?countrycodes=de',
    ]) {
      assert.equal(loadConfig({ GEOCODER_URL: url }).geocoderUrl, url);
    }
    for (const url of ['nominatim.example.org/search', 'ftp://nominatim.example.org/search', 'https://']) {
      assert.throws(
        () => loadConfig({ GEOCODER_URL: url }),
        (error: unknown) =>
          error instanceof ConfigError &&
          error.problems.length === 1 &&
          error.problems[0] ===
            `GEOCODER_URL must be an http(s) URL like https://nominatim.example.org/search, got "${url}"`,
        url,
      );
    }
    assert.throws(
      () => loadConfig({ GEOCODER_URL: 'https://me:secret@nominatim.example.org/search' }),
      (error: unknown) =>
        error instanceof ConfigError &&
        error.problems[0] === 'GEOCODER_URL must not contain a user name or password',
    );
  });

  test('database URLs', () => {
    assert.deepEqual(loadConfig({ DATABASE_URL: 'sqlite::memory:' }).database, {
      kind: 'sqlite',
      path: ':memory:',
    });
    assert.deepEqual(loadConfig({ DATABASE_URL: 'sqlite:/tmp/x.db' }).database, {
      kind: 'sqlite',
      path: '/tmp/x.db',
    });
    assert.deepEqual(loadConfig({ DATABASE_URL: 'postgres://u@h:5432/d' }).database, {
      kind: 'postgres',
      url: 'postgres://u@h:5432/d',
    });
  });

  test('retry schedule and rate rules parse', () => {
    assert.deepEqual(
      loadConfig({ WEBHOOK_RETRY_SCHEDULE: '1s,1s,2m,1h' }).webhookRetryScheduleMs,
      [1000, 1000, 120_000, 3_600_000],
    );
    assert.deepEqual(parseRateLimitRule('100/hour'), { points: 100, durationSeconds: 3600 });
    assert.equal(parseRateLimitRule('five/min'), undefined);
  });

  test('every bad value is reported at once', () => {
    try {
      loadConfig({
        PORT: '99999',
        DATABASE_URL: 'mysql://x',
        WEBHOOK_RETRY_SCHEDULE: '15m,soon',
        WEBHOOK_ALLOW_PRIVATE_TARGETS: 'maybe',
        LOGIN_RATE_LIMIT: '5 per minute',
        JWT_SECRET: 'short',
        LOG_LEVEL: 'loud',
      });
      assert.fail('expected a ConfigError');
    } catch (error) {
      assert.ok(error instanceof ConfigError);
      assert.equal(error.problems.length, 7);
      for (const name of [
        'PORT',
        'DATABASE_URL',
        'WEBHOOK_RETRY_SCHEDULE',
        'WEBHOOK_ALLOW_PRIVATE_TARGETS',
        'LOGIN_RATE_LIMIT',
        'JWT_SECRET',
        'LOG_LEVEL',
      ]) {
        assert.ok(
          error.problems.some((p) => p.startsWith(name)),
          `${name} reported`,
        );
      }
    }
  });

  test('the server refuses to start on bad configuration, with a clear message and a non-zero exit', () => {
    const result = spawnSync(process.execPath, ['src/server.ts'], {
      env: { ...process.env, PORT: 'eighty', DATABASE_URL: 'sqlite::memory:' },
      encoding: 'utf8',
      timeout: 20_000,
    });
    assert.equal(result.status, 2);
    assert.match(
      result.stderr,
      /Invalid configuration:\n\s+- PORT must be an integer from 0 to 65535, got "eighty"/,
    );
  });
});
