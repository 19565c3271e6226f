/** Plan, usage against every limit with a daily chart, invoices. */
export default function BillingPage() {
  return (
    <main id="main" className="page">
      <h1>Plan and usage</h1>
      <p className="lead">Not built yet.</p>
    </main>
  );
}
