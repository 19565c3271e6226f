/**
 * StatementBuilder: placeholders are made as values are bound, in either style, so the text's
 * placeholders and the parameter list always agree (the database round trips are in
 * statements.test.ts and statement-text.test.ts).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { StatementBuilder } from '../../src/db/statement-builder.ts';

describe('StatementBuilder', () => {
  it('numbers $n placeholders in binding order across values, lists and tuples', () => {
    const query = new StatementBuilder('$n')
      .sql('insert into t (a, b) values ')
      .tuples(2, 2, ['a1', 'b1', 'a2', 'b2'])
      .sql(' on conflict do nothing returning ')
      .value("it's")
      .sql(' where x in (')
      .list([1, 2])
      .sql(')')
      .compile();
    assert.equal(
      query.sql,
      'insert into t (a, b) values ($1, $2), ($3, $4) on conflict do nothing returning $5 where x in ($6, $7)',
    );
    assert.deepEqual(query.parameters, ['a1', 'b1', 'a2', 'b2', "it's", 1, 2]);
  });

  it('writes ? placeholders in the same order for SQLite', () => {
    const query = new StatementBuilder('?')
      .sql('select ')
      .value(1)
      .sql(', ')
      .tuples(1, 2, ['x', 'y'])
      .compile();
    assert.equal(query.sql, 'select ?, (?, ?)');
    assert.deepEqual(query.parameters, [1, 'x', 'y']);
  });

  it('refuses tuples whose values do not fill the rows', () => {
    assert.throws(() => new StatementBuilder('?').tuples(2, 3, [1, 2, 3, 4, 5]), /expected 6 values, got 5/);
  });
});
