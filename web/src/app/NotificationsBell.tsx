/**
 * The header's link to the notifications inbox, with the unread count. The count is asked again on
 * every navigation, every minute (notifications arrive from the server's side: dead letters, quota),
 * and whenever a page says it marked some read.
 */
import { useEffect, useState } from 'react';
import { api } from '../api/client.ts';
import { Link } from './Link.tsx';
import { useLocation } from './router.ts';

const REFRESH_MS = 60_000;
const CHANGED = 'notifications-changed';

/** For pages that mark notifications read: the bell asks for its count again at once. */
export function announceNotificationsChanged(): void {
  window.dispatchEvent(new Event(CHANGED));
}

function useUnreadCount(path: string): number | null {
  const [count, setCount] = useState<number | null>(null);
  // biome-ignore lint/correctness/useExhaustiveDependencies: asked again on every navigation
  useEffect(() => {
    const abort = new AbortController();
    const ask = (): void => {
      void api
        .GET('/api/v1/account/notifications', {
          params: { query: { unread: true, limit: 1 } },
          signal: abort.signal,
        })
        .then(({ data }) => {
          if (data) setCount(data.pagination.total);
        })
        // A missed count (offline, navigating away) is not worth a message: the next one comes.
        .catch(() => undefined);
    };
    ask();
    const timer = window.setInterval(ask, REFRESH_MS);
    window.addEventListener(CHANGED, ask);
    return () => {
      abort.abort();
      window.clearInterval(timer);
      window.removeEventListener(CHANGED, ask);
    };
  }, [path]);
  return count;
}

export function NotificationsBell() {
  const { path } = useLocation();
  const unread = useUnreadCount(path);
  // The count is visible; its meaning is read out with it ("Notifications 3 unread"), and the
  // accessible name keeps the visible text, so a voice command naming what is seen still works.
  return (
    <Link
      href="/notifications"
      className="bell"
      aria-current={path === '/notifications' ? 'page' : undefined}
    >
      Notifications
      {unread ? (
        <>
          {' '}
          <span className="bell-count">{unread > 99 ? '99+' : unread}</span>
          <span className="visually-hidden"> unread</span>
        </>
      ) : null}
    </Link>
  );
}
