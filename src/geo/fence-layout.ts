/**
 * Layout of the packed fences (fence-store.ts): the per-slot record, the per-cell grid entry, coordinate
 * chunk widths. Shared by the store, its builder, the exact tests and the index.
 */

/**
 * Record layout, {@link REC} doubles per slot:
 *  [0..3] index box [w, s, e, n] (polygons: the exact bbox; circles: padded, may wrap with w > e)
 *  [4]    slot code: slot for a polygon, −(slot + 1) for a circle
 *  polygon [5] first position, [6] first ring end (index in `ringEnds`), [7] ring count,
 *          [8] grid: 0 = none, −1 = not built yet, b + 1 = grid block at global offset b of `grids`
 *  circle  [5] lng, [6] lat, [7] radius (m), [8] cos(lat), [9] inner half-height (°), [10] inner half-width (°)
 */
export const REC = 11;
export const R_CODE = 4;
export const R_P0 = 5;
export const R_RINGS_AT = 6;
export const R_RINGS = 7;
export const R_GRID = 8;
export const R_LNG = 5;
export const R_LAT = 6;
export const R_RADIUS = 7;
export const R_COS_LAT = 8;
export const R_IN_LAT = 9;
export const R_IN_LNG = 10;

/**
 * A slot's entry in the spatial grid's cells (grid-index.ts): {@link ENTRY} doubles, one cache line, so
 * that a candidate is tested without reading its record:
 *  [0..3] box [w, s, e, n] (never wrapping: a wrapping circle has two entries, one per half)
 *  polygon [4] first position, [5] grid state (as `rec`), [6] first ring end,
 *          [7] ring count + {@link RINGS_G} × grid size G (0 without a grid)
 *  circle  [4] lng, [5] lat, [6] inner half-height (°), [7] inner half-width (°); the exact test reads `rec`
 */
export const ENTRY = 8;
export const E_P0 = 4;
export const E_GRID = 5;
export const E_RINGS_AT = 6;
export const E_RINGS = 7;
/** Ring counts are < 1024 (≤ 501 rings); the grid size G (≤ 64) is packed above them. */
export const RINGS_G = 1024;

/** Chunk width when the number of positions is not known up front: 2^20 positions (16 MB of doubles). */
export const STREAM_CHUNK_BITS = 20;
/** Chunk width when it is (one chunk; 2^30 positions is far beyond any index). */
export const SIZED_CHUNK_BITS = 30;

/** Validated polygons have ≤ 500 vertices plus one closing position per ring; ring ends are Uint16. */
export const MAX_POSITIONS_PER_FENCE = 8000;
/** ~0.1 mm: makes a circle's index box conservative against rounding in its trigonometry. */
export const CIRCLE_INDEX_PAD_DEG = 1e-9;
