import type { Kysely } from 'kysely';
import type { DialectCapabilities } from '../database.ts';

/**
 * A schema change written once for both dialects: column types come from the capabilities
 * (timestamptz/text, jsonb/text, boolean/integer), so both databases get the same schema.
 */
export interface Migration {
  name: string;
  up(db: Kysely<unknown>, capabilities: DialectCapabilities): Promise<void>;
}
