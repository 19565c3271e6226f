/** Placeholder until the page is built. */
export default function DevicesPage() {
  return (
    <main id="main" className="page">
      <h1>Devices</h1>
    </main>
  );
}
