/** Webhooks, their deliveries and the dead-letter queue: /webhooks, /webhooks/deliveries, /webhooks/dead-letters. */
export default function WebhooksArea() {
  return (
    <main id="main" className="page">
      <h1>Webhooks</h1>
      <p className="lead">Not built yet.</p>
    </main>
  );
}
