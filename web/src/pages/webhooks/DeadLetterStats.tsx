/** Totals of the dead-letter queue and the webhooks with the most entries (GET /webhooks/dlq/stats). */
import { Link } from '../../app/Link.tsx';
import type { DeadLetterStats as Stats } from './types.ts';

export function DeadLetterStats({ stats }: { stats: Stats }) {
  return (
    <section className="dlq-stats" aria-labelledby="dlq-stats-title">
      <h2 id="dlq-stats-title" className="visually-hidden">
        Statistics
      </h2>
      <dl className="stat-cards">
        <div>
          <dt>Entries</dt>
          <dd>{stats.total_entries.toLocaleString()}</dd>
        </div>
        <div>
          <dt>Not retried</dt>
          <dd>{stats.not_requeued.toLocaleString()}</dd>
        </div>
        <div>
          <dt>Retried</dt>
          <dd>{stats.requeued.toLocaleString()}</dd>
        </div>
      </dl>
      {stats.top_failed_webhooks.length > 0 ? (
        <div className="top-failed">
          <h3>Most failed webhooks</h3>
          <ol>
            {stats.top_failed_webhooks.map((t) => (
              <li key={t.webhook_id ?? t.webhook_name}>
                {t.webhook_id ? (
                  <Link href={`/webhooks/${t.webhook_id}`}>{t.webhook_name}</Link>
                ) : (
                  t.webhook_name
                )}
                {': '}
                {t.count === 1 ? '1 entry' : `${t.count.toLocaleString()} entries`}
              </li>
            ))}
          </ol>
        </div>
      ) : null}
    </section>
  );
}
