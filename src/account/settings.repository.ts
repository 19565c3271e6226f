/** SQL for per-user account settings (contract §2.5). */
import { fromJson, json, toBool } from '../db/columns.ts';
import type { Executor } from '../db/transaction.ts';

export const NOTIFY_TOPICS = ['dlq', 'quota', 'api_key'] as const;
export type NotifyTopic = (typeof NOTIFY_TOPICS)[number];

export interface AccountSettings {
  timezone: string;
  emailNotifications: boolean;
  notifyOn: NotifyTopic[];
}

export const DEFAULT_SETTINGS: AccountSettings = {
  timezone: 'UTC',
  emailNotifications: false,
  notifyOn: [...NOTIFY_TOPICS],
};

/**
 * Gives the user a row holding the defaults unless it has one, so that a change has a row to lock.
 * Until then a user has no row and reads the defaults (findSettings).
 */
export async function ensureSettings(db: Executor, userId: string, now: Date): Promise<void> {
  await db
    .insertInto('account_settings')
    .values({
      user_id: userId,
      timezone: DEFAULT_SETTINGS.timezone,
      email_notifications: DEFAULT_SETTINGS.emailNotifications,
      notify_on: json(DEFAULT_SETTINGS.notifyOn),
      updated_at: now,
    })
    .onConflict((oc) => oc.column('user_id').doNothing())
    .execute();
}

/** `forUpdate` locks the row until the transaction ends (only where the dialect has row locks). */
export async function findSettings(
  db: Executor,
  userId: string,
  options: { forUpdate?: boolean } = {},
): Promise<AccountSettings> {
  const query = db.selectFrom('account_settings').selectAll().where('user_id', '=', userId);
  const row = await (options.forUpdate ? query.forUpdate() : query).executeTakeFirst();
  if (!row) return { ...DEFAULT_SETTINGS, notifyOn: [...DEFAULT_SETTINGS.notifyOn] };
  return {
    timezone: row.timezone,
    emailNotifications: toBool(row.email_notifications),
    notifyOn: fromJson<NotifyTopic[]>(row.notify_on),
  };
}

export async function saveSettings(
  db: Executor,
  userId: string,
  settings: AccountSettings,
  now: Date,
): Promise<void> {
  const values = {
    timezone: settings.timezone,
    email_notifications: settings.emailNotifications,
    notify_on: json(settings.notifyOn),
    updated_at: now,
  };
  await db
    .insertInto('account_settings')
    .values({ user_id: userId, ...values })
    .onConflict((oc) => oc.column('user_id').doUpdateSet(values))
    .execute();
}
