/** Workflows: the list, the builder and the runs (/workflows…). */
export default function WorkflowsArea() {
  return (
    <main id="main" className="page">
      <h1>Workflows</h1>
      <p className="lead">Not built yet.</p>
    </main>
  );
}
