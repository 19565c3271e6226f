/**
 * Which geofences' events a webhook receives: all, or the ones picked here by name (searched with
 * the API's `q`, so a workspace with thousands of geofences still works).
 */
import { useEffect, useId } from 'react';
import { EntityCombobox, type EntityOption } from '../../ui/EntityCombobox.tsx';
import { useEntityLookups } from '../events/entities.ts';

export interface GeofenceChoice {
  all: boolean;
  chosen: EntityOption[];
}

export function GeofencePicker({
  choice,
  onChange,
}: {
  choice: GeofenceChoice;
  onChange(choice: GeofenceChoice): void;
}) {
  const id = useId();
  const { resolveGeofence, searchGeofences } = useEntityLookups();
  // Ids saved before come without names: look them up once.
  const unnamed = choice.chosen.filter((g) => g.label === g.id).map((g) => g.id);
  const unnamedKey = unnamed.join(',');
  // biome-ignore lint/correctness/useExhaustiveDependencies: looked up when the set of unnamed ids changes
  useEffect(() => {
    if (unnamed.length === 0) return;
    const abort = new AbortController();
    void Promise.all(unnamed.map((g) => resolveGeofence(g))).then((found) => {
      if (abort.signal.aborted) return;
      const names = new Map(found.filter((f): f is EntityOption => f !== null).map((f) => [f.id, f]));
      onChange({
        ...choice,
        chosen: choice.chosen.map((g) => names.get(g.id) ?? { ...g, label: `${g.id} (not found)` }),
      });
    });
    return () => abort.abort();
  }, [unnamedKey]);

  return (
    <fieldset className="geofence-picker">
      <legend>Geofences</legend>
      <label className="check">
        <input
          type="radio"
          name={`${id}-scope`}
          checked={choice.all}
          onChange={() => onChange({ ...choice, all: true })}
        />{' '}
        Events of every geofence
      </label>
      <label className="check">
        <input
          type="radio"
          name={`${id}-scope`}
          checked={!choice.all}
          onChange={() => onChange({ ...choice, all: false })}
        />{' '}
        Only events of these geofences
      </label>
      {choice.all ? null : (
        <div className="picked-geofences">
          {choice.chosen.length === 0 ? (
            <p className="hint">None chosen yet: add at least one.</p>
          ) : (
            <ul aria-label="Chosen geofences">
              {choice.chosen.map((g) => (
                <li key={g.id}>
                  <span>{g.label}</span>
                  <button
                    type="button"
                    onClick={() =>
                      onChange({ ...choice, chosen: choice.chosen.filter((c) => c.id !== g.id) })
                    }
                  >
                    Remove<span className="visually-hidden"> {g.label}</span>
                  </button>
                </li>
              ))}
            </ul>
          )}
          <EntityCombobox
            label="Add a geofence"
            placeholder="Search by name"
            value={null}
            onChange={(_id, option) => {
              if (option && !choice.chosen.some((c) => c.id === option.id))
                onChange({ ...choice, chosen: [...choice.chosen, option] });
            }}
            search={searchGeofences}
            resolve={resolveGeofence}
          />
        </div>
      )}
    </fieldset>
  );
}
