/**
 * Webhooks, their deliveries and the dead-letter queue. The area gets every path under /webhooks
 * and picks the sub-page here: /webhooks (endpoints), /webhooks/new, /webhooks/{id},
 * /webhooks/deliveries, /webhooks/deliveries/{id}, /webhooks/dead-letters.
 */
import { Link } from '../../app/Link.tsx';
import { useLocation } from '../../app/router.ts';
import { DeadLettersPage } from './DeadLettersPage.tsx';
import { DeliveriesPage } from './DeliveriesPage.tsx';
import { DeliveryPage } from './DeliveryPage.tsx';
import { WebhookList } from './WebhookList.tsx';
import { WebhookPage } from './WebhookPage.tsx';

type Section = 'endpoints' | 'deliveries' | 'dead-letters';

const SECTIONS: Array<{ section: Section; href: string; label: string }> = [
  { section: 'endpoints', href: '/webhooks', label: 'Endpoints' },
  { section: 'deliveries', href: '/webhooks/deliveries', label: 'Deliveries' },
  { section: 'dead-letters', href: '/webhooks/dead-letters', label: 'Dead letters' },
];

export default function WebhooksArea() {
  const { path } = useLocation();
  const parts = path
    .replace(/^\/webhooks\/?/, '')
    .replace(/\/$/, '')
    .split('/');
  const [first = '', second, ...more] = parts;
  let section: Section = 'endpoints';
  let page = <NotFound />;
  if (more.length > 0) page = <NotFound />;
  else if (first === 'deliveries') {
    section = 'deliveries';
    page = second ? <DeliveryPage key={second} id={decodeURIComponent(second)} /> : <DeliveriesPage />;
  } else if (first === 'dead-letters' && !second) {
    section = 'dead-letters';
    page = <DeadLettersPage />;
  } else if (!second) {
    page =
      first === '' ? (
        <WebhookList />
      ) : (
        <WebhookPage key={first} id={first === 'new' ? null : decodeURIComponent(first)} />
      );
  }
  return (
    <main id="main" className="page webhooks-area">
      <nav className="subnav" aria-label="Webhooks">
        <ul>
          {SECTIONS.map((s) => (
            <li key={s.section}>
              <Link href={s.href} aria-current={s.section === section ? 'page' : undefined}>
                {s.label}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
      {page}
    </main>
  );
}

function NotFound() {
  return (
    <>
      <h1>Page not found</h1>
      <p>There is no webhooks page at this address.</p>
    </>
  );
}
