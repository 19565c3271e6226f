/** The notifications inbox. */
export default function NotificationsPage() {
  return (
    <main id="main" className="page">
      <h1>Notifications</h1>
      <p className="lead">Not built yet.</p>
    </main>
  );
}
