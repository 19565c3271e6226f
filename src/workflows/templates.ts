/**
 * Workflow templates (contract §6): the variables an action's `message`, `subject` and `body` may
 * use. Rendering and per-target escaping are implemented below by the templates module.
 */
export interface TemplateContext {
  event: 'geofence.enter' | 'geofence.exit' | 'geofence.dwell';
  event_type: 'enter' | 'exit' | 'dwell';
  /** Seed §6.3 `event_id`. */
  event_id: string;
  occurred_at: string;
  geofence: { id: string; name: string; metadata: Record<string, unknown> };
  device: {
    id: string;
    name: string;
    external_id: string | null;
    user_id: string | null;
    metadata: Record<string, unknown>;
  };
  point: { lat: number; lng: number };
  /** The event's own metadata (`event_metadata` of the record). */
  metadata: Record<string, unknown>;
  workflow: { id: string; name: string };
  /** The seed §6.3 webhook payload as JSON text (what `database`, `lambda` and `sns` send). */
  payload_json: string;
  /** True for a run started by POST /workflows/{id}/test. */
  test: boolean;
}
