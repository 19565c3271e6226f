/** Recognises constraint violations from either driver so services can map them to domain errors. */
export function isUniqueViolation(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const e = error as { code?: unknown; errcode?: unknown; message?: unknown };
  if (e.code === '23505') return true; // PostgreSQL unique_violation
  if (e.errcode === 2067 || e.errcode === 1555) return true; // SQLITE_CONSTRAINT_UNIQUE / _PRIMARYKEY
  return typeof e.message === 'string' && e.message.includes('UNIQUE constraint failed');
}

/** A row naming a parent that is not (or no longer) there. */
export function isForeignKeyViolation(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const e = error as { code?: unknown; errcode?: unknown; message?: unknown };
  if (e.code === '23503') return true; // PostgreSQL foreign_key_violation
  if (e.errcode === 787) return true; // SQLITE_CONSTRAINT_FOREIGNKEY
  return typeof e.message === 'string' && e.message.includes('FOREIGN KEY constraint failed');
}
