/** The signed-in frame: skip link, navigation, workspace switcher and sign-out around the page. */
import { type ChangeEvent, type ReactNode, useEffect, useState } from 'react';
import { useAuth } from '../auth/AuthProvider.tsx';
import { Link } from './Link.tsx';
import { NotificationsBell } from './NotificationsBell.tsx';
import { navigate, useLocation } from './router.ts';

export const NAV = [
  { href: '/geofences', label: 'Geofences' },
  { href: '/devices', label: 'Devices' },
  { href: '/events', label: 'Events' },
  { href: '/webhooks', label: 'Webhooks' },
  { href: '/workflows', label: 'Workflows' },
  { href: '/team', label: 'Team' },
  { href: '/billing', label: 'Plan & usage' },
  { href: '/settings', label: 'Settings' },
  { href: '/api-keys', label: 'API keys' },
] as const;

export function Shell({ children }: { children: ReactNode }) {
  const { me, logout, switchWorkspace } = useAuth();
  const { path } = useLocation();
  const [problem, setProblem] = useState<string | null>(null);
  // On a phone the navigation folds behind a Menu button; a chosen page folds it again.
  const [menuOpen, setMenuOpen] = useState(false);
  // biome-ignore lint/correctness/useExhaustiveDependencies: fold when the page changes
  useEffect(() => setMenuOpen(false), [path]);

  const onWorkspace = async (event: ChangeEvent<HTMLSelectElement>): Promise<void> => {
    setProblem(await switchWorkspace(event.target.value));
  };

  return (
    <div className="shell">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <span className="brand">◎ Geofence</span>
        <button
          type="button"
          className="menu-toggle"
          aria-expanded={menuOpen}
          aria-controls="main-nav"
          onClick={() => setMenuOpen((open) => !open)}
        >
          Menu
        </button>
        <nav aria-label="Main" id="main-nav" className={menuOpen ? 'open' : undefined}>
          <ul>
            {NAV.map((item) => (
              <li key={item.href}>
                <Link href={item.href} aria-current={path.startsWith(item.href) ? 'page' : undefined}>
                  {item.label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <div className="account">
          {me && me.workspaces.length > 0 ? (
            <label className="workspace-switcher">
              <span className="visually-hidden">Workspace</span>
              <select value={me.workspace_id} onChange={(e) => void onWorkspace(e)}>
                {me.workspaces.map((w) => (
                  <option key={w.id} value={w.id}>
                    {w.name}
                  </option>
                ))}
              </select>
            </label>
          ) : null}
          <NotificationsBell />
          <Link
            href="/account"
            className="who"
            title={`Account settings of ${me?.email ?? ''}`}
            aria-current={path === '/account' ? 'page' : undefined}
          >
            {me?.name ?? me?.email}
          </Link>
          <button
            type="button"
            onClick={() => {
              void logout().then(() => navigate('/login'));
            }}
          >
            Sign out
          </button>
        </div>
      </header>
      {problem ? (
        <div className="notice notice-error" role="alert">
          {problem}
        </div>
      ) : null}
      {children}
    </div>
  );
}
