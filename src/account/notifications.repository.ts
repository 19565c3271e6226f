/** SQL for in-app notifications; every query is scoped to the user who owns them. */
import { fromJson, json, toDate, toDateOrNull } from '../db/columns.ts';
import type { Executor } from '../db/transaction.ts';

export interface Notification {
  id: string;
  type: string;
  title: string;
  body: string;
  data: Record<string, unknown>;
  readAt: Date | null;
  createdAt: Date;
}

export async function insertNotification(
  db: Executor,
  n: {
    id: string;
    userId: string;
    workspaceId: string | null;
    type: string;
    title: string;
    body: string;
    data: Record<string, unknown>;
    now: Date;
  },
): Promise<void> {
  await db
    .insertInto('notifications')
    .values({
      id: n.id,
      user_id: n.userId,
      workspace_id: n.workspaceId,
      type: n.type,
      title: n.title,
      body: n.body,
      data: json(n.data),
      read_at: null,
      created_at: n.now,
    })
    .execute();
}

export async function listNotifications(
  db: Executor,
  userId: string,
  filter: { unread?: boolean | undefined; offset: number; limit: number },
): Promise<{ items: Notification[]; total: number }> {
  let query = db.selectFrom('notifications').where('user_id', '=', userId);
  if (filter.unread === true) query = query.where('read_at', 'is', null);
  if (filter.unread === false) query = query.where('read_at', 'is not', null);
  const rows = await query
    .selectAll()
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .offset(filter.offset)
    .limit(filter.limit)
    .execute();
  const count = await query.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return {
    items: rows.map((r) => ({
      id: r.id,
      type: r.type,
      title: r.title,
      body: r.body,
      data: fromJson<Record<string, unknown>>(r.data),
      readAt: toDateOrNull(r.read_at),
      createdAt: toDate(r.created_at),
    })),
    total: Number(count.n),
  };
}

export async function markRead(db: Executor, userId: string, id: string, now: Date): Promise<boolean> {
  const found = await db
    .selectFrom('notifications')
    .select('read_at')
    .where('user_id', '=', userId)
    .where('id', '=', id)
    .executeTakeFirst();
  if (!found) return false;
  if (found.read_at === null) {
    await db
      .updateTable('notifications')
      .set({ read_at: now })
      .where('user_id', '=', userId)
      .where('id', '=', id)
      .execute();
  }
  return true;
}

export async function markAllRead(db: Executor, userId: string, now: Date): Promise<number> {
  const result = await db
    .updateTable('notifications')
    .set({ read_at: now })
    .where('user_id', '=', userId)
    .where('read_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}
