/** SQL for users. Emails are stored lower-cased so uniqueness is case-insensitive. */
import type { Selectable } from 'kysely';
import { toDate, toDateOrNull } from '../db/columns.ts';
import type { Executor } from '../db/transaction.ts';
import { normalizeEmail } from '../shared/email-address.ts';
import type { UsersTable } from './auth.tables.ts';

export interface User {
  id: string;
  email: string;
  name: string | null;
  passwordHash: string;
  emailVerifiedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/** A row as read, derived from the table declaration so the two cannot drift apart. */
type UserRow = Selectable<UsersTable>;

function toUser(row: UserRow): User {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    passwordHash: row.password_hash,
    emailVerifiedAt: toDateOrNull(row.email_verified_at),
    createdAt: toDate(row.created_at),
    updatedAt: toDate(row.updated_at),
  };
}

export async function insertUser(
  db: Executor,
  user: { id: string; email: string; name: string | null; passwordHash: string; now: Date },
): Promise<void> {
  await db
    .insertInto('users')
    .values({
      id: user.id,
      email: normalizeEmail(user.email),
      name: user.name,
      password_hash: user.passwordHash,
      email_verified_at: null,
      created_at: user.now,
      updated_at: user.now,
    })
    .execute();
}

export async function findUserByEmail(db: Executor, email: string): Promise<User | undefined> {
  const row = await db
    .selectFrom('users')
    .selectAll()
    .where('email', '=', normalizeEmail(email))
    .executeTakeFirst();
  return row ? toUser(row) : undefined;
}

export async function findUserById(db: Executor, id: string): Promise<User | undefined> {
  const row = await db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
  return row ? toUser(row) : undefined;
}

export async function markEmailVerified(db: Executor, userId: string, now: Date): Promise<void> {
  await db
    .updateTable('users')
    .set({ email_verified_at: now, updated_at: now })
    .where('id', '=', userId)
    .execute();
}

export async function updatePasswordHash(
  db: Executor,
  userId: string,
  passwordHash: string,
  now: Date,
): Promise<void> {
  await db
    .updateTable('users')
    .set({ password_hash: passwordHash, updated_at: now })
    .where('id', '=', userId)
    .execute();
}
