/**
 * Operator CLI (contract §0): `node src/cli.ts <command> [--flags]`, or `npm run cli -- <command>`.
 *   migrate                                   apply pending migrations
 *   create-user --email E --password P [--name N] [--workspace NAME] [--role owner|admin|member]
 *   create-api-key --email E [--workspace ID] --name N [--scopes a,b|*]
 *   set-plan --workspace ID --plan P [--api-requests-per-hour N] [--events-per-month N] [--geofences N] [--webhooks N] [--devices N] [--price-cents N]
 *   simulate --device NAME --track FILE.geojson|FILE.csv [--speed X] [--url BASE] [--api-key KEY]
 *   verify-webhook --signature 'sha256=…' [--secret whsec_…] [--body-file F]   prints valid|invalid, exit 0|1
 *   worker                                    deliver webhooks (outbox dispatcher + delivery worker) until SIGTERM
 * Output is JSON on stdout so scripts can read it; errors go to stderr with exit code 1.
 */
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { createApiKey } from './auth/api-keys.service.ts';
import { register } from './auth/auth.service.ts';
import { scopesForRole } from './auth/scopes.ts';
import { findUserByEmail } from './auth/users.repository.ts';
import { customLimitsFromFlags, setPlan } from './billing/set-plan.ts';
import { ConfigError, loadConfig } from './config.ts';
import { migrateToLatest } from './db/migrate.ts';
import { createDeps, type Deps } from './deps.ts';
import { runWorkerUntilSignal } from './engine.ts';
import { createLogger } from './logger.ts';
import { DomainError } from './shared/errors.ts';
import { uuidv7 } from './shared/ids.ts';
import { simulate } from './simulator/simulate.ts';
import { parseTrack, TrackFormatError } from './simulator/track-file.ts';
import { verifyWebhookCommand } from './webhooks/verify-command.ts';
import {
  findMembership,
  insertMember,
  insertWorkspace,
  listMemberships,
} from './workspaces/workspaces.repository.ts';
import type { WorkspaceRole } from './workspaces/workspaces.tables.ts';

const USAGE = `Usage: node src/cli.ts <command> [options]
  migrate
  create-user --email <email> --password <password> [--name <name>] [--workspace <name>] [--role owner|admin|member]
      Creates the user and, with --workspace, a workspace of that name where the user gets --role (default owner).
  create-api-key --email <owner-or-admin email> --name <key name> [--scopes <comma list or *>] [--workspace <workspace id>]
      Prints the key once.
  set-plan --workspace <workspace id> --plan <plan id> [--api-requests-per-hour N] [--events-per-month N]
           [--geofences N] [--webhooks N] [--devices N] [--price-cents N]
      Switches the workspace's plan at once; the limit flags override the plan's (N or "unlimited"),
      e.g. an enterprise contract. Prints the subscription in force.
  simulate --device <name> --track <file.geojson|file.csv> [--speed <factor>] [--url <base>] [--api-key <key>]
      Replays a track through the API (device found or created by external id = name); prints each event.
      --url defaults to PUBLIC_URL, --api-key to $GEOFENCE_API_KEY; --speed 10 replays ten times faster, 0 = no waiting.
  verify-webhook --signature <X-SVC-Signature value> [--secret <whsec_…>] [--body-file <file>]
      Checks a received delivery: the HMAC-SHA256 of the raw body (the file, or stdin) with the secret
      (or $WEBHOOK_SECRET). Prints valid (exit 0) or invalid (exit 1).
  worker
      Delivers webhooks without serving HTTP (like \`npm run worker\`) until SIGTERM or SIGINT.`;

type Flags = Record<string, string | undefined>;

function need(flags: Flags, name: string): string {
  const value = flags[name];
  if (!value) throw new UsageError(`--${name} is required`);
  return value;
}

class UsageError extends Error {}

async function createUser(deps: Deps, flags: Flags): Promise<unknown> {
  const role = (flags.role ?? 'owner') as WorkspaceRole;
  if (!['owner', 'admin', 'member'].includes(role))
    throw new UsageError('--role must be owner, admin or member');
  const { user, workspace } = await register(
    { ...deps.identity, signupEnabled: true },
    {
      email: need(flags, 'email'),
      password: need(flags, 'password'),
      name: flags.name,
      workspaceName: flags.workspace,
    },
  );
  if (role !== 'owner') {
    // The registration workspace stays the user's own; the named role applies to a fresh shared one.
    const id = uuidv7();
    const now = deps.clock.now();
    await insertWorkspace(deps.database.db, { id, name: flags.workspace ?? 'Shared workspace', now });
    await insertMember(deps.database.db, { workspaceId: id, userId: user.id, role, now });
    return { user: { id: user.id, email: user.email }, workspace: { id, name: flags.workspace, role } };
  }
  return {
    user: { id: user.id, email: user.email },
    workspace: { id: workspace.id, name: workspace.name, role: 'owner' },
  };
}

async function createKey(deps: Deps, flags: Flags): Promise<unknown> {
  const user = await findUserByEmail(deps.database.db, need(flags, 'email'));
  if (!user) throw new UsageError('No user with that e-mail');
  const membership = flags.workspace
    ? await findMembership(deps.database.db, user.id, flags.workspace)
    : (await listMemberships(deps.database.db, user.id))[0];
  if (!membership) throw new UsageError('The user is not a member of that workspace');
  if (membership.role === 'member') throw new UsageError('Only owners and admins can create API keys');
  const scopes = (flags.scopes ?? '*')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const { apiKey, key } = await createApiKey(
    {
      db: deps.database.db,
      clock: deps.clock,
      authenticator: deps.identity.authenticator,
      notifier: deps.notifier,
    },
    {
      kind: 'user',
      userId: user.id,
      workspaceId: membership.workspace.id,
      role: membership.role,
      sessionId: 'cli',
      scopes: scopesForRole(membership.role),
    },
    { name: need(flags, 'name'), scopes },
  );
  return {
    id: apiKey.id,
    name: apiKey.name,
    prefix: apiKey.prefix,
    scopes: apiKey.scopes,
    workspace_id: apiKey.workspaceId,
    key,
  };
}

async function runSimulation(flags: Flags, publicUrl: string): Promise<number> {
  const trackFile = need(flags, 'track');
  const speed = flags.speed === undefined ? 1 : Number(flags.speed);
  if (!Number.isFinite(speed) || speed < 0) throw new UsageError('--speed must be a number ≥ 0');
  const apiKey = flags['api-key'] ?? process.env.GEOFENCE_API_KEY;
  if (!apiKey) throw new UsageError('--api-key (or GEOFENCE_API_KEY) is required');
  const points = parseTrack(trackFile, fs.readFileSync(trackFile, 'utf8'));
  const result = await simulate({
    baseUrl: flags.url ?? publicUrl,
    apiKey,
    device: need(flags, 'device'),
    points,
    speed: speed === 0 ? Number.POSITIVE_INFINITY : speed,
  });
  process.stderr.write(
    `sent ${result.sent} locations for device ${result.deviceId}; ${result.events.length} events\n`,
  );
  return 0;
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === '--help' || command === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return command ? 0 : 1;
  }
  const { values } = parseArgs({
    args: rest,
    options: {
      email: { type: 'string' },
      password: { type: 'string' },
      name: { type: 'string' },
      workspace: { type: 'string' },
      role: { type: 'string' },
      scopes: { type: 'string' },
      device: { type: 'string' },
      track: { type: 'string' },
      speed: { type: 'string' },
      url: { type: 'string' },
      'api-key': { type: 'string' },
      plan: { type: 'string' },
      'api-requests-per-hour': { type: 'string' },
      'events-per-month': { type: 'string' },
      geofences: { type: 'string' },
      webhooks: { type: 'string' },
      devices: { type: 'string' },
      'price-cents': { type: 'string' },
      secret: { type: 'string' },
      signature: { type: 'string' },
      'body-file': { type: 'string' },
    },
    strict: true,
  });
  const flags = values as Flags;
  // Needs neither configuration nor a database: a receiver can run it anywhere.
  if (command === 'verify-webhook') {
    const { stdin, stdout, stderr, env } = process;
    return verifyWebhookCommand(flags, { stdin, stdout, stderr, env });
  }
  const config = loadConfig();
  if (command === 'simulate') return runSimulation(flags, config.publicUrl);
  if (command === 'worker') {
    // Runs until SIGTERM/SIGINT, which end the process (same as `npm run worker`).
    return runWorkerUntilSignal(await createDeps(config));
  }
  const logger = createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel, process.stderr);
  const deps = await createDeps(config, { logger, skipMigrations: command === 'migrate' });
  try {
    let result: unknown;
    switch (command) {
      case 'migrate':
        result = await migrateToLatest(deps.database);
        break;
      case 'create-user':
        result = await createUser(deps, flags);
        break;
      case 'create-api-key':
        result = await createKey(deps, flags);
        break;
      case 'set-plan': {
        const custom = customLimitsFromFlags(flags);
        if ('problem' in custom) throw new UsageError(custom.problem);
        result = await setPlan(deps.billing, need(flags, 'workspace'), need(flags, 'plan'), custom);
        break;
      }
      default:
        throw new UsageError(`Unknown command "${command}"\n${USAGE}`);
    }
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    return 0;
  } finally {
    await deps.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    if (
      error instanceof ConfigError ||
      error instanceof UsageError ||
      error instanceof DomainError ||
      error instanceof TrackFormatError
    ) {
      process.stderr.write(`${error.message}\n`);
    } else {
      process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    }
    process.exit(1);
  },
);
