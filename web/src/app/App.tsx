/** Picks the page for the address; signed-out visitors of a dashboard page go to sign-in first. */
import { lazy, Suspense, useEffect, useSyncExternalStore } from 'react';
import { isSignedIn, onSessionChange } from '../auth/session.ts';
import { ApiKeysPage } from '../pages/api-keys/ApiKeysPage.tsx';
import { AcceptInvitationPage } from '../pages/auth/AcceptInvitationPage.tsx';
import { ForgotPasswordPage } from '../pages/auth/ForgotPasswordPage.tsx';
import { LoginPage } from '../pages/auth/LoginPage.tsx';
import { RegisterPage } from '../pages/auth/RegisterPage.tsx';
import { ResetPasswordPage } from '../pages/auth/ResetPasswordPage.tsx';
import { VerifyEmailPage } from '../pages/auth/VerifyEmailPage.tsx';
import { useHeadingFocus } from './headingFocus.ts';
import { navigate, useLocation } from './router.ts';
import { Shell } from './Shell.tsx';

// The map pages carry Leaflet and the drawing tools: loaded when first visited, not with sign-in.
const GeofencesPage = lazy(() => import('../pages/geofences/GeofencesPage.tsx'));
const DevicesPage = lazy(() => import('../pages/devices/DevicesPage.tsx'));
const EventsPage = lazy(() => import('../pages/events/EventsPage.tsx'));
// Each area of the dashboard is its own chunk and picks its own sub-pages from the path.
const WebhooksArea = lazy(() => import('../pages/webhooks/WebhooksArea.tsx'));
const WorkflowsArea = lazy(() => import('../pages/workflows/WorkflowsArea.tsx'));
const TeamPage = lazy(() => import('../pages/team/TeamPage.tsx'));
const WorkspaceSettingsPage = lazy(() => import('../pages/settings/WorkspaceSettingsPage.tsx'));
const AccountPage = lazy(() => import('../pages/account/AccountPage.tsx'));
const NotificationsPage = lazy(() => import('../pages/notifications/NotificationsPage.tsx'));
const BillingPage = lazy(() => import('../pages/billing/BillingPage.tsx'));

const TITLES: Record<string, string> = {
  '/login': 'Sign in',
  '/register': 'Create account',
  '/forgot-password': 'Reset password',
  '/reset-password': 'New password',
  '/verify-email': 'Verify e-mail',
  '/accept-invitation': 'Accept invitation',
  '/geofences': 'Geofences',
  '/devices': 'Devices',
  '/events': 'Events',
  '/api-keys': 'API keys',
  '/webhooks': 'Webhooks',
  '/webhooks/deliveries': 'Deliveries',
  '/webhooks/dead-letters': 'Dead letters',
  '/workflows': 'Workflows',
  '/team': 'Team',
  '/settings': 'Workspace settings',
  '/account': 'Account',
  '/notifications': 'Notifications',
  '/billing': 'Plan and usage',
};

/** The title of the longest known path that starts the address (`/webhooks/abc` → Webhooks). */
function titleOf(path: string): string {
  let best = '';
  for (const known of Object.keys(TITLES))
    if ((path === known || path.startsWith(`${known}/`)) && known.length > best.length) best = known;
  return TITLES[best] ?? 'Dashboard';
}

function useSignedIn(): boolean {
  return useSyncExternalStore(onSessionChange, isSignedIn);
}

export function App() {
  const { path, query } = useLocation();
  const signedIn = useSignedIn();
  const token = query.get('token') ?? '';
  const next = safeNext(query.get('next'));

  useEffect(() => {
    document.title = `${titleOf(path)} · Geofence`;
  }, [path]);
  useHeadingFocus(path);

  switch (path) {
    case '/login':
      return <LoginPage next={next} />;
    case '/register':
      return <RegisterPage next={next} />;
    case '/forgot-password':
      return <ForgotPasswordPage />;
    case '/reset-password':
      return <ResetPasswordPage token={token} />;
    case '/verify-email':
      return <VerifyEmailPage token={token} />;
    case '/accept-invitation':
      return <AcceptInvitationPage token={token} />;
  }
  if (!signedIn) return <Redirect to={`/login?next=${encodeURIComponent(path + window.location.search)}`} />;
  return (
    <Shell>
      <Suspense fallback={<p role="status">Loading…</p>}>{page(path)}</Suspense>
    </Shell>
  );
}

function page(path: string) {
  if (path.startsWith('/geofences')) return <GeofencesPage />;
  if (path.startsWith('/devices')) return <DevicesPage />;
  if (path.startsWith('/events')) return <EventsPage />;
  if (path.startsWith('/api-keys')) return <ApiKeysPage />;
  if (path.startsWith('/webhooks')) return <WebhooksArea />;
  if (path.startsWith('/workflows')) return <WorkflowsArea />;
  if (path.startsWith('/team')) return <TeamPage />;
  if (path.startsWith('/settings')) return <WorkspaceSettingsPage />;
  if (path.startsWith('/account')) return <AccountPage />;
  if (path.startsWith('/notifications')) return <NotificationsPage />;
  if (path.startsWith('/billing')) return <BillingPage />;
  if (path === '/') return <Redirect to="/geofences" />;
  return (
    <main id="main" className="page">
      <h1>Page not found</h1>
      <p>There is no page at this address.</p>
    </main>
  );
}

function Redirect({ to }: { to: string }) {
  useEffect(() => navigate(to, { replace: true }), [to]);
  return null;
}

/** Only a path of this site (never another origin) is a place to go after sign-in. */
function safeNext(next: string | null): string {
  return next?.startsWith('/') && !next.startsWith('//') ? next : '/geofences';
}
