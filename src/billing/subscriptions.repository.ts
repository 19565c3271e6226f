/** SQL for subscriptions (plan history per workspace) and the counts behind count limits. */
import { sql } from 'kysely';
import { fromJson, json, toDate } from '../db/columns.ts';
import type { DialectCapabilities } from '../db/database.ts';
import type { Executor, Trx } from '../db/transaction.ts';
import type { LimitName } from './plans.ts';

export type CustomLimits = Partial<Record<LimitName, number | null>>;

export interface SubscriptionRow {
  plan: string;
  customLimits: CustomLimits | null;
  customPriceCents: number | null;
  effectiveFrom: Date;
}

/** The subscription in force at `at` (the latest change not after it), or undefined: DEFAULT_PLAN. */
export async function subscriptionAt(
  db: Executor,
  workspaceId: string,
  at: Date,
): Promise<SubscriptionRow | undefined> {
  const row = await db
    .selectFrom('subscriptions')
    .select(['plan', 'custom_limits', 'custom_price_cents', 'effective_from'])
    .where('workspace_id', '=', workspaceId)
    .where('effective_from', '<=', at)
    .orderBy('effective_from', 'desc')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    plan: row.plan,
    customLimits: row.custom_limits === null ? null : fromJson<CustomLimits>(row.custom_limits),
    customPriceCents: row.custom_price_cents === null ? null : Number(row.custom_price_cents),
    effectiveFrom: toDate(row.effective_from),
  };
}

export async function insertSubscription(
  db: Executor,
  input: {
    id: string;
    workspaceId: string;
    plan: string;
    customLimits: CustomLimits | null;
    customPriceCents: number | null;
    effectiveFrom: Date;
  },
): Promise<void> {
  await db
    .insertInto('subscriptions')
    .values({
      id: input.id,
      workspace_id: input.workspaceId,
      plan: input.plan,
      custom_limits: input.customLimits === null ? null : json(input.customLimits),
      custom_price_cents: input.customPriceCents,
      effective_from: input.effectiveFrom,
    })
    .execute();
}

export type CountedResource = 'geofences' | 'webhooks' | 'devices';

export async function countResources(
  db: Executor,
  workspaceId: string,
  resource: CountedResource,
): Promise<number> {
  const row = await db
    .selectFrom(resource)
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('workspace_id', '=', workspaceId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * Makes every other transaction that creates `resource` in the workspace wait until this one ends
 * (commit or rollback), so the count read next is the one the insert adds to (ADR 011). PostgreSQL:
 * a transaction-scoped advisory lock keyed by the resource and the workspace (two hashes: an
 * accidental collision only makes two workspaces wait for each other). SQLite: nothing to do, the
 * transaction already holds the database's write lock since BEGIN IMMEDIATE.
 */
export async function lockCountedResource(
  trx: Trx,
  capabilities: DialectCapabilities,
  workspaceId: string,
  resource: CountedResource,
): Promise<void> {
  if (!capabilities.advisoryLocks) return;
  await sql`select pg_advisory_xact_lock(hashtext(${`count-limit:${resource}`}), hashtext(${workspaceId}))`.execute(
    trx,
  );
}

export async function workspaceExists(db: Executor, workspaceId: string): Promise<boolean> {
  const row = await db.selectFrom('workspaces').select('id').where('id', '=', workspaceId).executeTakeFirst();
  return row !== undefined;
}
