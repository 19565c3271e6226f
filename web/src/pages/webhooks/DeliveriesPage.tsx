/** /webhooks/deliveries: deliveries of every webhook, filtered in the URL. */
import { DeliveriesList } from './DeliveriesList.tsx';

export function DeliveriesPage() {
  return (
    <>
      <h1>Deliveries</h1>
      <p className="lead">Every request made to your webhooks, newest first. Open one to see its attempts.</p>
      <DeliveriesList webhookId={null} />
    </>
  );
}
