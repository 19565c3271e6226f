/**
 * The geometry of the geofence form as GeoJSON text: the keyboard's way to draw, and what drawing
 * on the map fills in. Its own part so the form shell stays about saving, not about shapes.
 */
import { TextField } from './GeofenceFormField.tsx';

export function GeofenceShapeFields({
  geometryText,
  error,
  onGeometryText,
  onShowOnMap,
}: {
  geometryText: string;
  /** A problem found before sending, or the server's (400 INVALID_GEOMETRY, a 422 issue). */
  error: string | null;
  onGeometryText: (text: string) => void;
  onShowOnMap: () => void;
}) {
  return (
    <>
      <TextField
        label="Geometry (GeoJSON)"
        hint='A "Polygon" (shell, then holes; rings closed) or {"type": "Circle", "coordinates": [lng, lat], "radius": metres}. Drawing on the map fills this in.'
        error={error}
      >
        {(attrs) => (
          <textarea
            {...attrs}
            rows={6}
            spellCheck={false}
            value={geometryText}
            onChange={(e) => onGeometryText(e.target.value)}
          />
        )}
      </TextField>
      <button type="button" onClick={onShowOnMap}>
        Show geometry on map
      </button>
    </>
  );
}
