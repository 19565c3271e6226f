/**
 * Invoices of closed periods (GET /subscriptions/invoices), newest first, paged with `offset` in
 * the address. A row opens its line items (plan price, event overage) in the row below it.
 */
import { Fragment, useState } from 'react';
import { failureMessage } from '../../api/queries.ts';
import { useLocation } from '../../app/router.ts';
import { offsetOf, Pager } from '../../ui/Pager.tsx';
import { useInvoices } from './billingApi.ts';
import { formatCents, formatMonth, formatPeriod, type Invoice } from './billingFormat.ts';

export function InvoicesSection() {
  const { query } = useLocation();
  const offset = offsetOf(query);
  const invoices = useInvoices(offset);
  const rows = invoices.data?.results ?? [];

  return (
    <section aria-labelledby="invoices-title" className="billing-section">
      <h2 id="invoices-title">Invoices</h2>
      <p className="hint">
        One per closed period: the plan in force at its end plus event overage. Computed, not charged.
      </p>
      {invoices.error ? (
        <div className="notice notice-error" role="alert">
          {failureMessage(invoices.error)}
        </div>
      ) : invoices.data === undefined ? (
        <p role="status">Loading…</p>
      ) : rows.length === 0 && offset === 0 ? (
        <p>No invoices yet: the first comes after this period closes.</p>
      ) : (
        <>
          {/* biome-ignore lint/a11y/noNoninteractiveTabindex: scrolled on small screens, reachable by keyboard */}
          <section className="table-wrap" aria-labelledby="invoices-title" tabIndex={0}>
            <table className="invoices-table">
              <caption className="visually-hidden">Invoices, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Period</th>
                  <th scope="col">Plan</th>
                  <th scope="col">Amount</th>
                  <th scope="col">Status</th>
                  <th scope="col">
                    <span className="visually-hidden">Line items</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {rows.map((invoice) => (
                  <InvoiceRow key={invoice.id} invoice={invoice} />
                ))}
              </tbody>
            </table>
          </section>
          {invoices.data.pagination ? (
            <Pager pagination={invoices.data.pagination} shown={rows.length} noun="invoices" />
          ) : null}
        </>
      )}
    </section>
  );
}

function InvoiceRow({ invoice }: { invoice: Invoice }) {
  const [open, setOpen] = useState(false);
  const month = formatMonth(invoice.period_start);
  const itemsId = `invoice-${invoice.id}-items`;
  return (
    <Fragment>
      <tr>
        <th scope="row">
          {month}
          <span className="hint invoice-days"> {formatPeriod(invoice.period_start, invoice.period_end)}</span>
        </th>
        <td>{invoice.plan}</td>
        <td>{formatCents(invoice.amount_cents)}</td>
        <td>{invoice.status === 'open' ? 'Open (not charged)' : invoice.status}</td>
        <td>
          <button type="button" aria-expanded={open} aria-controls={itemsId} onClick={() => setOpen(!open)}>
            {open ? 'Hide' : 'Show'} line items<span className="visually-hidden"> of {month}</span>
          </button>
        </td>
      </tr>
      <tr id={itemsId} hidden={!open} className="invoice-items">
        <td colSpan={5}>
          {open ? (
            <table>
              <caption>Line items of {month}</caption>
              <thead>
                <tr>
                  <th scope="col">Item</th>
                  <th scope="col">Quantity</th>
                  <th scope="col">Unit price</th>
                  <th scope="col">Amount</th>
                </tr>
              </thead>
              <tbody>
                {invoice.line_items.map((item, index) => (
                  // Line items have no id; their order on the invoice is fixed.
                  // biome-ignore lint/suspicious/noArrayIndexKey: see above
                  <tr key={index}>
                    <th scope="row">{item.description}</th>
                    <td>{item.quantity.toLocaleString()}</td>
                    <td>{formatCents(item.unit_amount_cents)}</td>
                    <td>{formatCents(item.amount_cents)}</td>
                  </tr>
                ))}
              </tbody>
              <tfoot>
                <tr>
                  <th scope="row" colSpan={3}>
                    Total
                  </th>
                  <td>{formatCents(invoice.amount_cents)}</td>
                </tr>
              </tfoot>
            </table>
          ) : null}
        </td>
      </tr>
    </Fragment>
  );
}
