/** Device use cases (contract §4.1): CRUD with an external id unique in the workspace. */

import { admitCreates, type CountLimiter, NO_COUNT_LIMIT } from '../billing/count-limits.ts';
import type { Db, DialectCapabilities } from '../db/database.ts';
import { isUniqueViolation } from '../db/errors.ts';
import { withTransaction } from '../db/transaction.ts';
import type { Clock } from '../shared/clock.ts';
import { DuplicateResourceError, NotFoundError } from '../shared/errors.ts';
import { uuidv7 } from '../shared/ids.ts';
import {
  type Device,
  type DeviceChanges,
  type DeviceFilters,
  type DeviceSort,
  deleteDevice as deleteRow,
  findDevice,
  findIdByExternalId,
  insertDevice,
  listDevices as listRows,
  newDevice,
  updateDevice as updateRow,
} from './devices.repository.ts';

export interface DevicesContext {
  db: Db;
  capabilities: DialectCapabilities;
  clock: Clock;
  /** The plan's device count limit (contract §7); absent where billing is not wired. */
  countLimit?: CountLimiter | undefined;
}

export interface CreateDeviceInput {
  name: string;
  externalId?: string | null | undefined;
  userId?: string | null | undefined;
  metadata?: Record<string, unknown> | undefined;
}

const NOT_FOUND = 'Device';

function duplicateExternalId(externalId: string): DuplicateResourceError {
  return new DuplicateResourceError(`A device with external_id "${externalId}" already exists`);
}

/** A unique violation that slipped past the pre-check (a race) is a duplicate too. */
async function guardDuplicate<T>(externalId: string | null | undefined, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (typeof externalId === 'string' && isUniqueViolation(error)) throw duplicateExternalId(externalId);
    throw error;
  }
}

export async function createDevice(
  ctx: DevicesContext,
  workspaceId: string,
  input: CreateDeviceInput,
): Promise<Device> {
  const device = newDevice(
    uuidv7(),
    workspaceId,
    {
      name: input.name,
      externalId: input.externalId ?? null,
      userId: input.userId ?? null,
      metadata: input.metadata ?? {},
    },
    ctx.clock.now(),
  );
  await (ctx.countLimit ?? NO_COUNT_LIMIT)(workspaceId, 'devices', (limit) =>
    guardDuplicate(device.externalId, () =>
      withTransaction(ctx.db, async (trx) => {
        // First in the transaction: the plan's count, exact under concurrency, also against devices
        // that batch ingestion creates (ADR 011).
        await admitCreates(trx, ctx.capabilities, limit);
        if (device.externalId !== null && (await findIdByExternalId(trx, workspaceId, device.externalId))) {
          throw duplicateExternalId(device.externalId);
        }
        await insertDevice(trx, device);
      }),
    ),
  );
  return device;
}

export async function getDevice(ctx: DevicesContext, workspaceId: string, id: string): Promise<Device> {
  const device = await findDevice(ctx.db, ctx.capabilities, workspaceId, id);
  if (!device) throw new NotFoundError(NOT_FOUND);
  return device;
}

export function listDevices(
  ctx: DevicesContext,
  workspaceId: string,
  filters: DeviceFilters,
  offset: number,
  limit: number,
  sort?: DeviceSort,
): Promise<{ devices: Device[]; total: number }> {
  return listRows(ctx.db, ctx.capabilities, workspaceId, filters, offset, limit, sort);
}

export async function updateDevice(
  ctx: DevicesContext,
  workspaceId: string,
  id: string,
  changes: DeviceChanges,
): Promise<Device> {
  return guardDuplicate(changes.externalId, () =>
    withTransaction(ctx.db, async (trx) => {
      if (typeof changes.externalId === 'string') {
        const holder = await findIdByExternalId(trx, workspaceId, changes.externalId);
        if (holder !== undefined && holder !== id) throw duplicateExternalId(changes.externalId);
      }
      const updated = await updateRow(trx, ctx.capabilities, workspaceId, id, changes, ctx.clock.now());
      if (!updated) throw new NotFoundError(NOT_FOUND);
      return updated;
    }),
  );
}

/** Deletes the device with its locations and sessions; its events stay (they are history). */
export async function deleteDevice(ctx: DevicesContext, workspaceId: string, id: string): Promise<void> {
  if (!(await deleteRow(ctx.db, workspaceId, id))) throw new NotFoundError(NOT_FOUND);
}
