/**
 * A workspace with `devices` devices (`dev-0`, `dev-1`, …), written straight into the database for
 * the storage-level benchmarks, which measure the repositories without the API in front.
 */
import type { Db } from '../../src/db/database.ts';
import { withTransaction } from '../../src/db/transaction.ts';
import { uuidv7 } from '../../src/shared/ids.ts';

export async function createBenchWorkspace(
  db: Db,
  devices: number,
): Promise<{ workspaceId: string; deviceIds: string[] }> {
  const workspaceId = uuidv7();
  const now = new Date();
  await db
    .insertInto('workspaces')
    .values({
      id: workspaceId,
      name: 'bench',
      access_token_ttl_seconds: 3600,
      created_at: now,
      updated_at: now,
    })
    .execute();
  const deviceIds = Array.from({ length: devices }, () => uuidv7());
  await withTransaction(db, async (trx) => {
    for (let i = 0; i < devices; i += 500) {
      await trx
        .insertInto('devices')
        .values(
          deviceIds.slice(i, i + 500).map((id, k) => ({
            id,
            workspace_id: workspaceId,
            name: `device ${i + k}`,
            external_id: `dev-${i + k}`,
            user_id: null,
            metadata: '{}',
            inside_geofence_ids: '[]',
            active_session_id: null,
            created_at: now,
            updated_at: now,
          })),
        )
        .execute();
    }
  });
  return { workspaceId, deviceIds };
}
