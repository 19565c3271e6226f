/** Placeholder until the page is built. */
export default function EventsPage() {
  return (
    <main id="main" className="page">
      <h1>Events</h1>
    </main>
  );
}
