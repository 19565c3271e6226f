/** Workspace settings (name, token lifetime). */
export default function WorkspaceSettingsPage() {
  return (
    <main id="main" className="page">
      <h1>Workspace settings</h1>
      <p className="lead">Not built yet.</p>
    </main>
  );
}
