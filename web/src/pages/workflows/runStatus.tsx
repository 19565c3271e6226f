/** A run's or an action's status as a badge (colour and the word, never colour alone). */
export function StatusBadge({ status }: { status: 'pending' | 'success' | 'failed' }) {
  return <span className={`badge badge-${status}`}>{status}</span>;
}

export function formatDuration(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(2)} s`;
}
