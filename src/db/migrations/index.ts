import { identity } from './0001-identity.ts';
import type { Migration } from './migration.ts';

/** Every migration, in order. Names are never changed once released. */
export const MIGRATIONS: readonly Migration[] = [identity];
