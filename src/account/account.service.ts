/**
 * Account settings (contract §2.5). A PATCH is a read-modify-write of one row: it runs in one
 * transaction with the row locked (PostgreSQL; SQLite serialises writers), so two partial updates of
 * different fields made at the same moment both survive. A user's first change creates the row
 * (with the defaults, then locked like any other).
 */
import type { Db, DialectCapabilities } from '../db/database.ts';
import { withTransaction } from '../db/transaction.ts';
import { FieldValidationError } from '../shared/errors.ts';
import {
  type AccountSettings,
  ensureSettings,
  findSettings,
  type NotifyTopic,
  saveSettings,
} from './settings.repository.ts';

export interface SettingsChange {
  timezone?: string | undefined;
  emailNotifications?: boolean | undefined;
  notifyOn?: NotifyTopic[] | undefined;
}

function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

export async function updateSettings(
  db: Db,
  capabilities: Pick<DialectCapabilities, 'rowLocks'>,
  userId: string,
  patch: SettingsChange,
  now: Date,
): Promise<AccountSettings> {
  if (patch.timezone !== undefined && !isTimeZone(patch.timezone)) {
    throw new FieldValidationError([
      { type: 'value_error', loc: ['body', 'timezone'], msg: 'Unknown IANA time zone' },
    ]);
  }
  return withTransaction(db, async (trx) => {
    await ensureSettings(trx, userId, now);
    const current = await findSettings(trx, userId, { forUpdate: capabilities.rowLocks });
    const next: AccountSettings = {
      timezone: patch.timezone ?? current.timezone,
      emailNotifications: patch.emailNotifications ?? current.emailNotifications,
      notifyOn: patch.notifyOn ?? current.notifyOn,
    };
    await saveSettings(trx, userId, next, now);
    return next;
  });
}
