/** Members, roles and invitations of the workspace. */
export default function TeamPage() {
  return (
    <main id="main" className="page">
      <h1>Team</h1>
      <p className="lead">Not built yet.</p>
    </main>
  );
}
