/**
 * Whether a geofence produces events. A saved geofence gets a switch that applies at once (its own
 * PATCH, nothing else of the form is sent); a new one a checkbox that goes with the create.
 */
export function GeofenceEnabledField({
  saved,
  enabled,
  busy,
  onToggle,
  onEnabled,
}: {
  /** The geofence's enabled state as saved, or null for a new geofence. */
  saved: boolean | null;
  /** The checkbox of a new geofence. */
  enabled: boolean;
  busy: boolean;
  onToggle: () => void;
  onEnabled: (enabled: boolean) => void;
}) {
  if (saved === null) {
    return (
      <label className="check">
        <input type="checkbox" checked={enabled} onChange={(e) => onEnabled(e.target.checked)} /> Enabled
      </label>
    );
  }
  return (
    <div className="field switch-row">
      <button
        type="button"
        role="switch"
        aria-checked={saved}
        className={`switch ${saved ? 'on' : 'off'}`}
        disabled={busy}
        onClick={onToggle}
      >
        Enabled
      </button>
      <span className="hint">
        {saved ? 'Produces events and matches /contains.' : 'Disabled: no events.'}
      </span>
    </div>
  );
}
