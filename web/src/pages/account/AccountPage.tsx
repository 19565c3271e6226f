/** Account settings and notification preferences. */
export default function AccountPage() {
  return (
    <main id="main" className="page">
      <h1>Account</h1>
      <p className="lead">Not built yet.</p>
    </main>
  );
}
