import type { Migration } from './migration.ts';

/**
 * Indexes for two writes that find rows by user (ADR 004): a confirmed password reset uses up the
 * user's other reset tokens, and removing a member revokes the API keys that member created in the
 * workspace. Without them each would scan every token or every key of the workspace ever made.
 */
export const identityLookupsByUser: Migration = {
  name: '0014_identity_lookups_by_user',
  async up(db) {
    await db.schema
      .createIndex('one_time_tokens_user_idx')
      .on('one_time_tokens')
      .columns(['user_id', 'purpose'])
      .execute();
    await db.schema
      .createIndex('api_keys_creator_idx')
      .on('api_keys')
      .columns(['workspace_id', 'created_by'])
      .execute();
  },
};
