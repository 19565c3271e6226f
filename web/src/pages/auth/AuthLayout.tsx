import type { ReactNode } from 'react';

/** The frame of the signed-out pages: one centred card with the page's heading. */
export function AuthLayout({ title, children }: { title: string; children: ReactNode }) {
  return (
    <main className="auth-page" id="main">
      <div className="auth-card">
        <p className="brand" aria-hidden="true">
          ◎ Geofence
        </p>
        <h1>{title}</h1>
        {children}
      </div>
    </main>
  );
}
