/**
 * The API-key limiter's own CPU cost per request, measured in this process on the real pieces
 * (createDeps → billing.apiKeyLimit) with no HTTP around them: end-to-end req/s on a shared 2-core
 * machine moves by more than the limiter costs, while CPU time of a tight loop does not.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '../../src/config.ts';
import { createDeps } from '../../src/deps.ts';

export interface LimiterCost {
  /** CPU µs per check (user + system of this process). */
  cpuUsPerCheck: number;
  checks: number;
}

/** Runs `checks` limiter checks for one API key, `concurrency` at a time (the Redis store awaits). */
export async function limiterCost(options: {
  plansFile: string;
  redisUrl?: string | undefined;
  redisPrefix?: string;
  checks: number;
  concurrency: number;
}): Promise<LimiterCost> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-limiter-'));
  const config = loadConfig({
    DATABASE_URL: 'sqlite::memory:',
    DATA_DIR: dir,
    PLANS_FILE: options.plansFile,
    JWT_SECRET: 'bench-jwt-secret-0123456789abcdefghijklmnop',
    ENCRYPTION_KEY: 'bench-encryption-key-0123456789abcdefghijk',
    ...(options.redisUrl
      ? { REDIS_URL: options.redisUrl, REDIS_KEY_PREFIX: options.redisPrefix ?? 'bench:' }
      : {}),
  });
  const deps = await createDeps(config, { logger: pino({ level: 'silent' }) });
  try {
    const limit = deps.billing.apiKeyLimit;
    if (!limit) throw new Error('API-key rate limit is off');
    // No subscription row: the workspace is on the default plan (the bench's PLANS_FILE).
    const workspaceId = 'bench-workspace';
    const principal = {
      kind: 'api_key' as const,
      apiKeyId: 'bench-key',
      workspaceId,
      name: 'bench',
      prefix: 'gf_live_benc',
      createdBy: null,
      role: 'member' as const,
      grantedScopes: ['*'],
      scopes: new Set<never>(),
    };
    // Warm-up: loads and caches the subscription, compiles the path.
    for (let i = 0; i < 20_000; i++) await limit.check(principal);
    const start = process.cpuUsage();
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next++ < options.checks) await limit.check(principal);
    };
    await Promise.all(Array.from({ length: options.concurrency }, worker));
    const used = process.cpuUsage(start);
    return {
      cpuUsPerCheck: Math.round(((used.user + used.system) / options.checks) * 1000) / 1000,
      checks: options.checks,
    };
  } finally {
    await deps.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
