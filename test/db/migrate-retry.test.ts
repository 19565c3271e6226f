import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { concurrentCatalogChange } from '../../src/db/migrate.ts';

/** An error shaped like pg's DatabaseError. */
function pgError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}

describe('migration retry on a concurrent catalog change', () => {
  it("retries when another session's schema or table vanished during Kysely's introspection", () => {
    assert.equal(
      concurrentCatalogChange(pgError('3F000', 'schema "t_other" does not exist'), 't_ours'),
      true,
    );
    assert.equal(
      concurrentCatalogChange(pgError('42P01', 'relation "t_other.x" does not exist'), 't_ours'),
      true,
    );
    assert.equal(concurrentCatalogChange(pgError('3F000', 'schema "x" does not exist'), undefined), true);
    // pg_get_serial_sequence on a table whose schema another session is dropping.
    assert.equal(
      concurrentCatalogChange(
        pgError('42703', 'column "user_id" of relation "auth_sessions" does not exist'),
        't_ours',
      ),
      true,
    );
  });

  it('does not retry when our own schema is missing, or for any other error', () => {
    assert.equal(
      concurrentCatalogChange(pgError('3F000', 'schema "t_ours" does not exist'), 't_ours'),
      false,
    );
    assert.equal(concurrentCatalogChange(pgError('23505', 'duplicate key'), 't_ours'), false);
    assert.equal(concurrentCatalogChange(new Error('boom'), 't_ours'), false);
    assert.equal(concurrentCatalogChange('text', 't_ours'), false);
  });
});
