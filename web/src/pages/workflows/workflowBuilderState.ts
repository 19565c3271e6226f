/**
 * What the workflow builder decides without a browser: how a problem's field key reads in the
 * summary, the event types once one is ticked or cleared, and the actions after a move. Kept
 * apart from the components so these can be tested without React (the draft itself is draft.ts).
 */
import { specOf } from './actionTypes.ts';
import { type DraftAction, EVENT_TYPES, type EventType } from './draft.ts';

/** The API's limit (contract: 1..10 actions); the builder stops offering "Add action" there. */
export const MAX_ACTIONS = 10;

export const EVENT_LABELS: Record<EventType, string> = { enter: 'Enter', exit: 'Exit', dwell: 'Dwell' };

/** The ticked event types after `type` is ticked or cleared, always in the order of EVENT_TYPES. */
export function withEventType(current: readonly EventType[], type: EventType, ticked: boolean): EventType[] {
  return ticked
    ? EVENT_TYPES.filter((t) => t === type || current.includes(t))
    : current.filter((t) => t !== type);
}

/** The actions with the one at `index` moved one place up (-1) or down (1); null if there is none. */
export function movedAction(
  actions: readonly DraftAction[],
  index: number,
  delta: -1 | 1,
): DraftAction[] | null {
  const moved = [...actions];
  const [action] = moved.splice(index, 1);
  if (!action) return null;
  moved.splice(index + delta, 0, action);
  return moved;
}

/**
 * A field key as the form names it: `actions.1.config.webhook_url` of a Slack action is "Action 2
 * (Slack webhook URL)", `actions.0.config.to.1` "Action 1 (To, item 2)".
 */
export function describeKey(key: string, actions: readonly DraftAction[]): string {
  const parts = key.split('.');
  if (parts[0] === 'actions' && parts[1] !== undefined) {
    const index = Number(parts[1]);
    const [field, item] = parts.slice(2).filter((p) => p !== 'config');
    const action = actions[index];
    if (field === undefined) return `Action ${index + 1}`;
    const label =
      field === 'type'
        ? 'Type'
        : ((action && specOf(action.type).fields.find((f) => f.name === field)?.label) ?? field);
    return `Action ${index + 1} (${label}${item === undefined ? '' : `, item ${Number(item) + 1}`})`;
  }
  if (key === 'trigger.geofence_id') return 'Geofence';
  if (key === 'trigger.event_types') return 'Event types';
  return key.charAt(0).toUpperCase() + key.slice(1);
}
