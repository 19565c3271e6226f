/** Placeholder until the page is built. */
export default function GeofencesPage() {
  return (
    <main id="main" className="page">
      <h1>Geofences</h1>
    </main>
  );
}
