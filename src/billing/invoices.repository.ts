/** SQL for invoices (one per workspace and closed period). */
import { fromJson, json, toDate } from '../db/columns.ts';
import type { Executor } from '../db/transaction.ts';

export interface LineItem {
  kind: 'subscription' | 'event_overage';
  description: string;
  quantity: number;
  unit_amount_cents: number;
  amount_cents: number;
}

export interface Invoice {
  id: string;
  workspaceId: string;
  period: string;
  periodStart: Date;
  periodEnd: Date;
  plan: string;
  amountCents: number;
  lineItems: LineItem[];
  status: string;
  createdAt: Date;
}

/** Inserts unless the workspace already has the period's invoice (another node was first). */
export async function insertInvoiceIfAbsent(db: Executor, invoice: Invoice): Promise<boolean> {
  const inserted = await db
    .insertInto('invoices')
    .values({
      id: invoice.id,
      workspace_id: invoice.workspaceId,
      period: invoice.period,
      period_start: invoice.periodStart,
      period_end: invoice.periodEnd,
      plan: invoice.plan,
      amount_cents: invoice.amountCents,
      line_items: json(invoice.lineItems),
      status: invoice.status,
      created_at: invoice.createdAt,
    })
    .onConflict((oc) => oc.columns(['workspace_id', 'period']).doNothing())
    .returning('id')
    .executeTakeFirst();
  return inserted !== undefined;
}

/** Workspaces that existed before `periodEnd` and have no invoice for `period` yet. */
export async function workspacesWithoutInvoice(
  db: Executor,
  period: string,
  periodEnd: Date,
  limit: number,
): Promise<string[]> {
  const rows = await db
    .selectFrom('workspaces as w')
    .leftJoin('invoices as i', (join) =>
      join.onRef('i.workspace_id', '=', 'w.id').on('i.period', '=', period),
    )
    .select('w.id')
    .where('i.id', 'is', null)
    .where('w.created_at', '<', periodEnd)
    .orderBy('w.id')
    .limit(limit)
    .execute();
  return rows.map((r) => r.id);
}

export async function listInvoices(
  db: Executor,
  workspaceId: string,
  offset: number,
  limit: number,
): Promise<{ invoices: Invoice[]; total: number }> {
  const [rows, count] = await Promise.all([
    db
      .selectFrom('invoices')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .orderBy('period', 'desc')
      .offset(offset)
      .limit(limit)
      .execute(),
    db
      .selectFrom('invoices')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('workspace_id', '=', workspaceId)
      .executeTakeFirstOrThrow(),
  ]);
  return {
    total: Number(count.n),
    invoices: rows.map((r) => ({
      id: r.id,
      workspaceId: r.workspace_id,
      period: r.period,
      periodStart: toDate(r.period_start),
      periodEnd: toDate(r.period_end),
      plan: r.plan,
      amountCents: Number(r.amount_cents),
      lineItems: fromJson<LineItem[]>(r.line_items),
      status: r.status,
      createdAt: toDate(r.created_at),
    })),
  };
}
