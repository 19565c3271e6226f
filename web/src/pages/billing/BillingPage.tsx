/**
 * Plan and usage: the workspace's plan and period with every plan's limits (owners and admins
 * change it here), usage against each limit with a daily chart, and the invoices of closed
 * periods. A plan change re-reads the usage, whose limits are the new plan's.
 */
import { api } from '../../api/client.ts';
import { useAuth } from '../../auth/AuthProvider.tsx';
import { useResource } from '../../ui/useResource.ts';
import type { Subscription } from './billingFormat.ts';
import { InvoicesSection } from './InvoicesSection.tsx';
import { PlanSection } from './PlanSection.tsx';
import { UsageSection } from './UsageSection.tsx';

export default function BillingPage() {
  const { me } = useAuth();
  // Another workspace is another plan: everything is read again.
  return <WorkspaceBilling key={me?.workspace_id ?? ''} />;
}

function WorkspaceBilling() {
  const current = useResource((signal) => api.GET('/api/v1/subscriptions/current', { signal }), 'current');
  const plans = useResource(
    (signal) => api.GET('/api/v1/subscriptions/plans', { params: { query: { limit: 200 } }, signal }),
    'plans',
  );
  const usage = useResource((signal) => api.GET('/api/v1/subscriptions/usage', { signal }), 'usage');

  const changed = (_subscription: Subscription): void => {
    current.reload();
    usage.reload();
  };

  const problem = current.error ?? plans.error;
  return (
    <main id="main" className="page billing-page">
      <h1>Plan and usage</h1>
      {problem ? (
        <div className="notice notice-error" role="alert">
          {problem}
        </div>
      ) : current.data && plans.data ? (
        <PlanSection subscription={current.data} plans={plans.data.results} onChanged={changed} />
      ) : (
        <p role="status">Loading the plan…</p>
      )}
      {usage.error ? (
        <div className="notice notice-error" role="alert">
          {usage.error}
        </div>
      ) : usage.data ? (
        <UsageSection usage={usage.data} />
      ) : (
        <p role="status">Loading usage…</p>
      )}
      <InvoicesSection />
    </main>
  );
}
