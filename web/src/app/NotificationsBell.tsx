/** The header's link to the notifications inbox, with the unread count. */
import { Link } from './Link.tsx';
import { useLocation } from './router.ts';

export function NotificationsBell() {
  const { path } = useLocation();
  return (
    <Link
      href="/notifications"
      className="bell"
      aria-current={path === '/notifications' ? 'page' : undefined}
    >
      Notifications
    </Link>
  );
}
