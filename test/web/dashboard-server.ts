/**
 * The real server as a process (`node src/server.ts`) serving the built dashboard, on a database
 * of its own (a fresh PostgreSQL database, or a SQLite file, after TEST_DATABASE_URL), for the
 * browser tests. Everything it opens is closed by `stop()`.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { IS_POSTGRES } from '../helpers/database.ts';
import { createProcessDatabase, httpExpect, spawnServer } from '../helpers/spawned-server.ts';
import { ensureDashboardBuilt } from './build.ts';

export const DATABASE_NAME = IS_POSTGRES ? 'postgres' : 'sqlite';
export const PASSWORD = 'correct horse battery staple';

export interface DashboardServer {
  base: string;
  /** What the process logged (warnings and errors), for failure messages. */
  output(): string;
  stop(): Promise<void>;
}

export async function startDashboardServer(env: Record<string, string> = {}): Promise<DashboardServer> {
  await ensureDashboardBuilt();
  const database = await createProcessDatabase();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'geofence-web-'));
  const cleanUp = async () => {
    await database.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    const server = await spawnServer(database, dataDir, {
      // A browser test signs in many times from one address: the per-IP login limit (5/min), the
      // refresh limit and the registration limit would stop it, and are tested elsewhere.
      LOGIN_RATE_LIMIT: '1000/min',
      REFRESH_RATE_LIMIT: '1000/min',
      REGISTER_RATE_LIMIT: '1000/hour',
      ...env,
    });
    return {
      base: server.base,
      output: server.output,
      stop: async () => {
        try {
          await server.stop();
        } finally {
          await cleanUp();
        }
      },
    };
  } catch (error) {
    await cleanUp();
    throw error;
  }
}

export interface Account {
  email: string;
  password: string;
  token: string;
  refreshToken: string;
  workspaceId: string;
}

let accounts = 0;

/** A user registered through the API (for tests whose subject is not registration), signed in. */
export async function registerAccount(base: string, label: string): Promise<Account> {
  const email = uniqueEmail(label);
  const registered = await httpExpect<{ workspace: { id: string } }>(201, base, 'POST', '/auth/register', {
    body: { email, password: PASSWORD, name: `${label} user`, workspace_name: `${label} workspace` },
  });
  const pair = await httpExpect<{ access_token: string; refresh_token: string }>(
    200,
    base,
    'POST',
    '/auth/login',
    { body: { email, password: PASSWORD } },
  );
  return {
    email,
    password: PASSWORD,
    token: pair.access_token,
    refreshToken: pair.refresh_token,
    workspaceId: registered.workspace.id,
  };
}

export function uniqueEmail(label: string): string {
  return `${label}-${process.pid}-${++accounts}-${Date.now().toString(36)}@example.com`;
}
