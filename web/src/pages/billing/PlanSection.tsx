/**
 * The workspace's plan and period, every plan with its limits, and the change of plan (PUT
 * /subscriptions/current, owners and admins only: members read the plans and are told who can
 * change them). Only plans with `self_service` can be chosen; the others say to contact us.
 */
import { type FormEvent, useState } from 'react';
import { errorMessage } from '../../api/client.ts';
import type { paths } from '../../api/schema.ts';
import { Notice } from '../../ui/forms.tsx';
import { RequireRole } from '../../ui/RequireRole.tsx';
import { changePlan } from './billingApi.ts';
import {
  formatCents,
  formatLimit,
  formatPeriod,
  formatPrice,
  LIMIT_NAMES,
  type Plan,
  type Subscription,
} from './billingFormat.ts';

export function PlanSection({
  subscription,
  plans,
  onChanged,
}: {
  subscription: Subscription;
  plans: readonly Plan[];
  onChanged: (subscription: Subscription) => void;
}) {
  const current = plans.find((p) => p.id === subscription.plan);
  return (
    <section aria-labelledby="plan-title" className="billing-section">
      <h2 id="plan-title">Current plan</h2>
      <div className="plan-summary">
        <p className="plan-name">
          <strong>{current?.name ?? subscription.plan}</strong>{' '}
          <span className="badge badge-success">{subscription.status}</span>
        </p>
        <p>
          {current ? `Price: ${formatPrice(current.price_cents_per_month)}` : null}
          {current?.overage_cents_per_1000_events != null
            ? `, plus ${formatCents(current.overage_cents_per_1000_events)} per started 1,000 events over the quota`
            : null}
        </p>
        <p>
          Current period: {formatPeriod(subscription.current_period_start, subscription.current_period_end)}{' '}
          (UTC)
        </p>
        <dl className="plan-limits" aria-label="Limits of your plan">
          {LIMIT_NAMES.map(({ key, label }) => (
            <div key={key}>
              <dt>{label}</dt>
              <dd>{formatLimit(subscription.limits[key])}</dd>
            </div>
          ))}
        </dl>
      </div>

      <h2 id="plans-title">Plans</h2>
      <PlansTable plans={plans} currentId={subscription.plan} />

      <h3 id="change-title" className="billing-subtitle">
        Change plan
      </h3>
      <RequireRole roles={['owner', 'admin']} what="change the plan">
        <ChangePlanForm plans={plans} currentId={subscription.plan} onChanged={onChanged} />
      </RequireRole>
    </section>
  );
}

function PlansTable({ plans, currentId }: { plans: readonly Plan[]; currentId: string }) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a table scrolled sideways on a phone must be reachable by keyboard
    <section className="table-wrap" aria-labelledby="plans-title" tabIndex={0}>
      <table className="plans-table">
        <caption className="visually-hidden">Plans and their limits</caption>
        <thead>
          <tr>
            <th scope="col">Plan</th>
            <th scope="col">Price</th>
            {LIMIT_NAMES.map(({ key, label }) => (
              <th scope="col" key={key}>
                {label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {plans.map((plan) => (
            <tr key={plan.id} aria-current={plan.id === currentId ? 'true' : undefined}>
              <th scope="row">
                {plan.name}
                {plan.id === currentId ? <span className="current-mark"> (current)</span> : null}
              </th>
              <td>{formatPrice(plan.price_cents_per_month)}</td>
              {LIMIT_NAMES.map(({ key }) => (
                <td key={key}>{formatLimit(plan.limits[key])}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

/**
 * The generated type lists the default plan ids; a server with PLANS_FILE has its own, which the
 * plans list gives and the server checks.
 */
type PlanId =
  paths['/api/v1/subscriptions/current']['put']['requestBody']['content']['application/json']['plan'];

function ChangePlanForm({
  plans,
  currentId,
  onChanged,
}: {
  plans: readonly Plan[];
  currentId: string;
  onChanged: (subscription: Subscription) => void;
}) {
  const [chosen, setChosen] = useState(currentId);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const byAgreement = plans.filter((p) => !p.self_service);

  const submit = async (event: FormEvent<HTMLFormElement>): Promise<void> => {
    event.preventDefault();
    setError(null);
    setDone(null);
    setBusy(true);
    const { data, error: failure } = await changePlan(chosen as PlanId);
    setBusy(false);
    if (!data) {
      setError(errorMessage(failure));
      return;
    }
    setDone(`Your workspace is now on the ${plans.find((p) => p.id === data.plan)?.name ?? data.plan} plan.`);
    onChanged(data);
  };

  return (
    <form onSubmit={(e) => void submit(e)} className="change-plan" aria-labelledby="change-title">
      <fieldset>
        <legend>New plan</legend>
        {plans
          .filter((p) => p.self_service)
          .map((plan) => (
            <label key={plan.id} className="check plan-choice">
              <input
                type="radio"
                name="plan"
                value={plan.id}
                checked={chosen === plan.id}
                onChange={() => setChosen(plan.id)}
              />{' '}
              {plan.name} <span className="hint">({formatPrice(plan.price_cents_per_month)})</span>
            </label>
          ))}
      </fieldset>
      {byAgreement.length > 0 ? (
        <p className="hint">
          {byAgreement.map((p) => p.name).join(', ')}: limits set by agreement; contact us to switch.
        </p>
      ) : null}
      <p className="hint">
        The new limits apply at once; the period's invoice uses the plan in force at its end.
      </p>
      <Notice kind="error">{error}</Notice>
      <Notice kind="success">{done}</Notice>
      <button type="submit" className="primary" disabled={busy || chosen === currentId}>
        Change plan
      </button>
    </form>
  );
}
