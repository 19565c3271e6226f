/**
 * Plan and usage: the workspace's plan and period with every plan's limits (owners and admins
 * change it here), usage against each limit with a daily chart, and the invoices of closed
 * periods. A plan change re-reads the usage, whose limits are the new plan's.
 */
import { failureMessage, useInvalidate } from '../../api/queries.ts';
import { useAuth } from '../../auth/AuthProvider.tsx';
import { billingKeys, usePlans, useSubscription, useUsage } from './billingApi.ts';
import { InvoicesSection } from './InvoicesSection.tsx';
import { PlanSection } from './PlanSection.tsx';
import { UsageSection } from './UsageSection.tsx';

export default function BillingPage() {
  const { me } = useAuth();
  // Another workspace is another plan: everything is read again.
  return <WorkspaceBilling key={me?.workspace_id ?? ''} />;
}

function WorkspaceBilling() {
  const current = useSubscription();
  const plans = usePlans();
  const usage = useUsage();
  const invalidate = useInvalidate();

  const changed = (): void => invalidate(billingKeys.all);

  const problem = failureMessage(current.error) ?? failureMessage(plans.error);
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
          {failureMessage(usage.error)}
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
