/**
 * The plans the database gives for the statements a piece of code actually runs: a Kysely plugin
 * records the operation trees of the queries made through it, and `explainQuery` asks for the plan
 * of one with its own SQL and parameters. Used by the history query-plan test and bench:queries.
 */
import {
  CompiledQuery,
  createQueryId,
  type Kysely,
  type KyselyPlugin,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryResult,
  type RootOperationNode,
  type UnknownRow,
} from 'kysely';

/** Keeps the operation trees of the queries run through it (`db.withPlugin(recorder)`). */
export class QueryRecorder implements KyselyPlugin {
  nodes: RootOperationNode[] = [];
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    this.nodes.push(args.node);
    return args.node;
  }
  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}

/**
 * The plan of a recorded query, one line (` | ` between the plan's lines). On PostgreSQL the plan is
 * asked with sequential scans off: on the tiny tables of a test it would rightly scan them, and the
 * question is which index the statement can use.
 */
export async function explainQuery<DB>(
  db: Kysely<DB>,
  dialect: 'sqlite' | 'postgres',
  node: RootOperationNode,
  { avoidSeqScan = false }: { avoidSeqScan?: boolean } = {},
): Promise<string> {
  const compiled = db.getExecutor().compileQuery(node, createQueryId());
  if (dialect === 'sqlite') {
    const { rows } = await db.executeQuery<{ detail: string }>(
      CompiledQuery.raw(`explain query plan ${compiled.sql}`, [...compiled.parameters]),
    );
    return rows.map((r) => r.detail).join(' | ');
  }
  return db.transaction().execute(async (trx) => {
    if (avoidSeqScan) await trx.executeQuery(CompiledQuery.raw('set local enable_seqscan = off'));
    const { rows } = await trx.executeQuery<{ 'QUERY PLAN': string }>(
      CompiledQuery.raw(`explain ${compiled.sql}`, [...compiled.parameters]),
    );
    return rows.map((r) => r['QUERY PLAN']).join(' | ');
  });
}
