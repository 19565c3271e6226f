/**
 * Batch items name their device by `device_id` or `device_external_id`; an unknown external id
 * creates the device (contract §4.2). The creation commits in its own short transaction before the
 * ingestion transaction, which then locks every device of the batch in id order like any other.
 * Creating is idempotent (insert-if-absent on the external id), so a failed ingestion or a
 * concurrent batch naming the same new device leaves exactly one device behind. New devices count
 * against the plan's device limit (contract §7), exactly: the short transaction takes the
 * workspace's device lock before it counts (ADR 011), and only batches that name unknown devices
 * take it.
 */
import { countUnderLock, NO_COUNT_LIMIT, quotaExceeded } from '../billing/count-limits.ts';
import { type Trx, withTransaction } from '../db/transaction.ts';
import { idsByExternalIds, insertDevicesIfAbsent, newDevice } from '../devices/devices.repository.ts';
import { uuidv7 } from '../shared/ids.ts';
import type { IngestContext } from './ingest.service.ts';

export interface DeviceRef {
  device_id?: string | undefined;
  device_external_id?: string | undefined;
}

/** The device id of each reference, in order (ids given directly are checked later, under lock). */
export async function resolveDeviceRefs(
  ctx: IngestContext,
  workspaceId: string,
  refs: readonly DeviceRef[],
): Promise<string[]> {
  const externalIds = [
    ...new Set(refs.flatMap((r) => (r.device_external_id !== undefined ? [r.device_external_id] : []))),
  ];
  let known = await idsByExternalIds(ctx.db, ctx.capabilities, workspaceId, externalIds);
  const unknown = externalIds.filter((e) => !known.has(e));
  if (unknown.length > 0) {
    const now = ctx.clock.now();
    await (ctx.countLimit ?? NO_COUNT_LIMIT)(workspaceId, 'devices', (limit) =>
      withTransaction(ctx.db, async (trx) => {
        let creating = unknown;
        if (limit !== undefined) {
          // Devices created this way count like any other: a batch that would pass the plan's limit
          // is refused whole (403 QUOTA_EXCEEDED), before anything is created or stored. Under the
          // lock, devices a concurrent request created meanwhile are no longer new and do not count.
          const count = await countUnderLock(trx, ctx.capabilities, limit);
          creating = await stillUnknown(trx, ctx, workspaceId, unknown);
          if (creating.length > 0 && count + creating.length > limit.limit) throw quotaExceeded(limit, count);
        }
        await insertDevicesIfAbsent(
          trx,
          [...creating]
            .sort()
            .map((externalId) =>
              newDevice(
                uuidv7(),
                workspaceId,
                { name: externalId, externalId, userId: null, metadata: {} },
                now,
              ),
            ),
        );
      }),
    );
    known = await idsByExternalIds(ctx.db, ctx.capabilities, workspaceId, externalIds);
  }
  return refs.map((r) =>
    r.device_external_id !== undefined ? (known.get(r.device_external_id) ?? '') : (r.device_id ?? ''),
  );
}

/**
 * The same for a device token's batch (contract §2.3b): a token writes only its own device, so a
 * reference to any other device resolves to '' (reported "Device not found", like an unknown id)
 * and an unknown external id creates nothing.
 */
export async function ownDeviceRefs(
  ctx: IngestContext,
  workspaceId: string,
  ownDeviceId: string,
  refs: readonly DeviceRef[],
): Promise<string[]> {
  const externalIds = [
    ...new Set(refs.flatMap((r) => (r.device_external_id !== undefined ? [r.device_external_id] : []))),
  ];
  const known =
    externalIds.length === 0
      ? new Map<string, string>()
      : await idsByExternalIds(ctx.db, ctx.capabilities, workspaceId, externalIds);
  return refs.map((r) => {
    const id = r.device_external_id !== undefined ? known.get(r.device_external_id) : r.device_id;
    return id === ownDeviceId ? id : '';
  });
}

async function stillUnknown(
  trx: Trx,
  ctx: IngestContext,
  workspaceId: string,
  externalIds: readonly string[],
): Promise<string[]> {
  const present = await idsByExternalIds(trx, ctx.capabilities, workspaceId, externalIds);
  return externalIds.filter((e) => !present.has(e));
}
