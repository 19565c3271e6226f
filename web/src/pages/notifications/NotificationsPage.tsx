/**
 * The notifications inbox, newest first: all or only unread (`?unread=true`, so the view is a
 * link), mark one read, mark all read. The header's bell is told after each change.
 */
import { useState } from 'react';
import { errorMessage, type Schemas } from '../../api/client.ts';
import { failureMessage, useInvalidate } from '../../api/queries.ts';
import { Link } from '../../app/Link.tsx';
import { announceNotificationsChanged } from '../../app/NotificationsBell.tsx';
import { setQuery, useLocation } from '../../app/router.ts';
import { formatTime } from '../../ui/format.ts';
import { Notice } from '../../ui/forms.tsx';
import { offsetOf, Pager, useLastPageWhenPastEnd } from '../../ui/Pager.tsx';
import { bodyText, nextStep } from './nextStep.ts';
import {
  markAllNotificationsRead,
  markNotificationRead,
  notificationKeys,
  useNotifications,
} from './notificationsApi.ts';

type Notification = Schemas['Notification'];

export default function NotificationsPage() {
  const { query } = useLocation();
  const unreadOnly = query.get('unread') === 'true';
  const offset = offsetOf(query);
  const [problem, setProblem] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const list = useNotifications(unreadOnly, offset);
  const invalidate = useInvalidate();
  useLastPageWhenPastEnd(list.data?.pagination, list.data?.results.length ?? 0);

  const afterChange = (error: unknown, message: string): void => {
    setProblem(error ? errorMessage(error) : null);
    setDone(error ? null : message);
    invalidate(notificationKeys.all);
    announceNotificationsChanged();
  };

  const markRead = async (notification: Notification): Promise<void> => {
    const { error } = await markNotificationRead(notification.id);
    afterChange(error, `“${notification.title}” marked read.`);
  };

  const markAllRead = async (): Promise<void> => {
    const { data, error } = await markAllNotificationsRead();
    const n = data?.updated ?? 0;
    afterChange(
      error,
      n === 0 ? 'Nothing was unread.' : `${n} notification${n === 1 ? '' : 's'} marked read.`,
    );
  };

  return (
    <main id="main" className="page notifications-page">
      <div className="page-head">
        <h1>Notifications</h1>
        <button type="button" onClick={() => void markAllRead()}>
          Mark all read
        </button>
      </div>
      <p className="lead">
        Dead letters, quota thresholds and API-key changes in your workspaces. Choose which also come by
        e-mail on your account page.
      </p>
      <fieldset className="segmented">
        <legend className="visually-hidden">Show</legend>
        <label className="check">
          <input
            type="radio"
            name="show"
            checked={!unreadOnly}
            onChange={() => setQuery({ unread: null, offset: null })}
          />{' '}
          All
        </label>
        <label className="check">
          <input
            type="radio"
            name="show"
            checked={unreadOnly}
            onChange={() => setQuery({ unread: 'true', offset: null })}
          />{' '}
          Unread only
        </label>
      </fieldset>
      <Notice kind="error">{problem ?? failureMessage(list.error)}</Notice>
      <Notice kind="success">{done}</Notice>
      {list.data === undefined ? (
        list.error ? null : (
          <p role="status">Loading…</p>
        )
      ) : list.data.results.length === 0 ? (
        <p>{unreadOnly ? 'Nothing unread.' : 'No notifications yet.'}</p>
      ) : (
        <>
          <ul className="inbox" aria-label={unreadOnly ? 'Unread notifications' : 'Notifications'}>
            {list.data.results.map((n) => (
              <li key={n.id} className={n.read ? 'inbox-item' : 'inbox-item unread'}>
                <article aria-labelledby={`n-${n.id}`}>
                  <h2 id={`n-${n.id}`} className="inbox-title">
                    {n.read ? null : <span className="badge badge-pending">Unread</span>} {n.title}
                  </h2>
                  <p>{bodyText(n)}</p>
                  <NextStepLink notification={n} />
                  <p className="inbox-meta">
                    <time dateTime={n.created_at}>{formatTime(n.created_at)}</time>
                    {n.read ? null : (
                      <button type="button" onClick={() => void markRead(n)}>
                        Mark read<span className="visually-hidden">: {n.title}</span>
                      </button>
                    )}
                  </p>
                </article>
              </li>
            ))}
          </ul>
          <Pager pagination={list.data.pagination} shown={list.data.results.length} noun="notifications" />
        </>
      )}
    </main>
  );
}

function NextStepLink({ notification }: { notification: Notification }) {
  const step = nextStep(notification);
  if (!step) return null;
  return (
    <p>
      <Link href={step.href}>{step.label}</Link>
    </p>
  );
}
