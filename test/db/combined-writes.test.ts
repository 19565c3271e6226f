import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CompiledQuery } from 'kysely';
import { CombinedWrites } from '../../src/db/combined-writes.ts';

describe('CombinedWrites', () => {
  it('sends nothing for no statements and a lone statement unchanged', async () => {
    const none = new CombinedWrites();
    assert.equal(none.combined(), undefined);
    const one = new CombinedWrites();
    const q = CompiledQuery.raw('insert into t (a) select * from unnest($1::text[])', [['x']]);
    await one.executeQuery(q);
    assert.equal(one.combined(), q);
  });

  it('joins statements as branches of one WITH, renumbering each one’s parameters after the previous', async () => {
    const writes = new CombinedWrites();
    await writes.executeQuery(
      CompiledQuery.raw('insert into a (x, y) select * from unnest($1::text[], $2::int[])', [['p'], [1]]),
    );
    await writes.executeQuery(CompiledQuery.raw('update b set z = $2 where id = $1', ['id', 'z']));
    await writes.executeQuery(
      CompiledQuery.raw('insert into c (n) values ($1) on conflict (n) do update set n = c.n + $1', [5]),
    );
    const combined = writes.combined();
    assert.equal(
      combined?.sql,
      'with w1 as (insert into a (x, y) select * from unnest($1::text[], $2::int[])), ' +
        'w2 as (update b set z = $4 where id = $3), ' +
        'w3 as (insert into c (n) values ($5) on conflict (n) do update set n = c.n + $5) select 1',
    );
    assert.deepEqual(combined?.parameters, [['p'], [1], 'id', 'z', 5]);
  });

  it('flush runs the combined statement once on the given runner', async () => {
    const writes = new CombinedWrites();
    await writes.executeQuery(CompiledQuery.raw('delete from a where id = $1', ['1']));
    await writes.executeQuery(CompiledQuery.raw('delete from b where id = $1', ['2']));
    const ran: CompiledQuery[] = [];
    await writes.flush({
      executeQuery: async (q: CompiledQuery) => {
        ran.push(q);
        return { rows: [] };
      },
    } as never);
    assert.equal(ran.length, 1);
    assert.deepEqual(ran[0]?.parameters, ['1', '2']);
  });
});
