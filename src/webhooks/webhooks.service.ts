/**
 * Webhook endpoint use cases (contract §5): CRUD, the signing secret (generated here, stored
 * sealed, revealed and rotated on request) and the checks a JSON schema cannot express. See
 * docs/decisions/009-webhook-configuration-and-ssrf.md.
 */
import { admitCreates, type CountLimiter, NO_COUNT_LIMIT } from '../billing/count-limits.ts';
import type { Db, DialectCapabilities } from '../db/database.ts';
import { type Executor, withTransaction } from '../db/transaction.ts';
import type { Clock } from '../shared/clock.ts';
import type { SecretBox } from '../shared/encryption.ts';
import { NotFoundError } from '../shared/errors.ts';
import { uuidv7 } from '../shared/ids.ts';
import { generateWebhookSecret } from './signature.ts';
import { checkWebhookHeaders, checkWebhookUrl, unknownGeofenceIssues } from './webhook-rules.ts';
import {
  deleteWebhook as deleteRow,
  existingGeofenceIds,
  findSealedSecret,
  findWebhookById,
  findWebhookWithSealedSecret,
  insertWebhook,
  listWebhooks as listRows,
  replaceSealedSecret,
  updateWebhook as updateRow,
  type Webhook,
  type WebhookChanges,
  type WebhookFields,
} from './webhooks.repository.ts';

export interface WebhooksContext {
  db: Db;
  /** For the lock that keeps the count limit exact (ADR 011). */
  capabilities: DialectCapabilities;
  clock: Clock;
  secretBox: SecretBox;
  /** WEBHOOK_ALLOW_PRIVATE_TARGETS (contract §0): when false, literal private IP urls are refused. */
  allowPrivateTargets: boolean;
  /** The plan's webhook count limit (403 QUOTA_EXCEEDED), when billing is wired in. */
  countLimit?: CountLimiter | undefined;
}

/** A webhook with its opened signing secret: what the delivery engine signs with. */
export interface WebhookWithSecret extends Webhook {
  secret: string;
}

const NOT_FOUND = 'Webhook';

/** Field checks beyond the schema; throws 422 (headers, geofence ids) or 400 (private target). */
async function checkFields(
  ctx: WebhooksContext,
  db: Executor,
  workspaceId: string,
  fields: WebhookChanges,
): Promise<void> {
  if (fields.url !== undefined) checkWebhookUrl(fields.url, ctx.allowPrivateTargets);
  if (fields.headers !== undefined) checkWebhookHeaders(fields.headers);
  if (fields.geofenceIds) {
    const known = await existingGeofenceIds(db, workspaceId, fields.geofenceIds);
    unknownGeofenceIssues(fields.geofenceIds, known);
  }
}

export async function createWebhook(
  ctx: WebhooksContext,
  workspaceId: string,
  fields: WebhookFields,
): Promise<{ webhook: Webhook; secret: string }> {
  const now = ctx.clock.now();
  const webhook: Webhook = { id: uuidv7(), workspaceId, ...fields, createdAt: now, updatedAt: now };
  const secret = generateWebhookSecret();
  await checkFields(ctx, ctx.db, workspaceId, fields);
  const sealed = ctx.secretBox.seal(secret);
  await (ctx.countLimit ?? NO_COUNT_LIMIT)(workspaceId, 'webhooks', (limit) =>
    withTransaction(ctx.db, async (trx) => {
      // The plan's count and the insert in one transaction, serialised per workspace (ADR 011).
      await admitCreates(trx, ctx.capabilities, limit);
      await insertWebhook(trx, webhook, sealed);
    }),
  );
  return { webhook, secret };
}

export async function getWebhook(ctx: WebhooksContext, workspaceId: string, id: string): Promise<Webhook> {
  const webhook = await findWebhookById(ctx.db, workspaceId, id);
  if (!webhook) throw new NotFoundError(NOT_FOUND);
  return webhook;
}

export function listWebhooks(
  ctx: WebhooksContext,
  workspaceId: string,
  filters: { enabled?: boolean | undefined },
  offset: number,
  limit: number,
): Promise<{ webhooks: Webhook[]; total: number }> {
  return listRows(ctx.db, workspaceId, filters, offset, limit);
}

export async function updateWebhook(
  ctx: WebhooksContext,
  workspaceId: string,
  id: string,
  changes: WebhookChanges,
): Promise<Webhook> {
  return withTransaction(ctx.db, async (trx) => {
    // 404 before field errors: another workspace's id must not leak which checks it would pass.
    if (!(await findWebhookById(trx, workspaceId, id))) throw new NotFoundError(NOT_FOUND);
    await checkFields(ctx, trx, workspaceId, changes);
    const updated = await updateRow(trx, workspaceId, id, changes, ctx.clock.now());
    if (!updated) throw new NotFoundError(NOT_FOUND);
    return updated;
  });
}

/** Deliveries already recorded keep their history (`webhook_id` becomes null, seed §2.4). */
export async function deleteWebhook(ctx: WebhooksContext, workspaceId: string, id: string): Promise<void> {
  if (!(await deleteRow(ctx.db, workspaceId, id))) throw new NotFoundError(NOT_FOUND);
}

export async function revealSecret(ctx: WebhooksContext, workspaceId: string, id: string): Promise<string> {
  const sealed = await findSealedSecret(ctx.db, workspaceId, id);
  if (sealed === undefined) throw new NotFoundError(NOT_FOUND);
  return ctx.secretBox.open(sealed);
}

/**
 * Replaces the secret at once: the old one stops verifying with the next attempt, because the
 * engine signs each attempt with the secret current at send time (no overlap window; ADR 009).
 */
export async function rotateSecret(ctx: WebhooksContext, workspaceId: string, id: string): Promise<string> {
  const secret = generateWebhookSecret();
  const replaced = await replaceSealedSecret(
    ctx.db,
    workspaceId,
    id,
    ctx.secretBox.seal(secret),
    ctx.clock.now(),
  );
  if (!replaced) throw new NotFoundError(NOT_FOUND);
  return secret;
}

/** For the delivery engine: the webhook with its opened secret, or undefined when it is gone. */
export async function loadWebhookWithSecret(
  db: Executor,
  secretBox: SecretBox,
  workspaceId: string,
  id: string,
): Promise<WebhookWithSecret | undefined> {
  const found = await findWebhookWithSealedSecret(db, workspaceId, id);
  if (!found) return undefined;
  return { ...found.webhook, secret: secretBox.open(found.secretSealed) };
}
