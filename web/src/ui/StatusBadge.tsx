/** A delivery's, run's or action's status as a badge (colour and the word, never colour alone). */
export function StatusBadge({ status }: { status: 'pending' | 'success' | 'failed' }) {
  return <span className={`badge badge-${status}`}>{status}</span>;
}
