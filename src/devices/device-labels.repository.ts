/** SQL of devices' names, for the live stream's `location` messages (ADR 016). */
import type { DialectCapabilities } from '../db/database.ts';
import { statement } from '../db/statements.ts';
import type { Executor } from '../db/transaction.ts';

export interface DeviceLabel {
  name: string;
  externalId: string | null;
}

/**
 * Name and external id of each of these devices of the workspace (absent: deleted since). Hand-built
 * like `lockDevices`, for up to 1,000 ids a commit; read only while someone watches the workspace,
 * so ingestion's own reads stay as they were.
 */
export async function deviceLabels(
  db: Executor,
  capabilities: DialectCapabilities,
  workspaceId: string,
  ids: readonly string[],
): Promise<Map<string, DeviceLabel>> {
  const out = new Map<string, DeviceLabel>();
  if (ids.length === 0) return out;
  const b = statement(capabilities).sql('select id, name, external_id from devices where ');
  capabilities.statements.inList(b, 'id', ids);
  b.sql(" and workspace_id || '' = ").value(workspaceId);
  const { rows } = await db.executeQuery(
    b.compile<{ id: string; name: string; external_id: string | null }>(),
  );
  for (const row of rows) out.set(row.id, { name: row.name, externalId: row.external_id });
  return out;
}
