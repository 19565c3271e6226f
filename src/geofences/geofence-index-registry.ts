/**
 * One in-memory `GeofenceIndex` per workspace, holding its enabled geofences (ADR 007).
 *
 * - Loaded lazily from storage on a workspace's first query; concurrent first queries share one load.
 * - Kept current by this node's own writes incrementally: the service reports each committed change
 *   with the workspace version its transaction produced (`applyCommitted`), so local writes are
 *   visible to the very next query and never cause a rebuild.
 * - Other nodes' writes are noticed through the per-workspace version counter in the database: a
 *   query re-reads it at most once per `checkIntervalMs` and reloads the workspace when it moved.
 *   Writes elsewhere are therefore visible here within that window (plus the reload).
 * - Workspaces not queried for `idleEvictMs` are evicted (their index dropped, as by `forget`), so memory
 *   follows the working set rather than every workspace ever queried since start; the next query
 *   reloads lazily. Checked lazily on queries, sweeping at most every `idleEvictMs / 4`.
 */
import type { Db } from '../db/database.ts';
import type { FenceGeometry } from '../geo/index.ts';
import type { Clock } from '../shared/clock.ts';
import { loadIndexEntries, readIndexVersion } from './geofences.repository.ts';
import { type FenceRules, NO_RULES, WorkspaceFences } from './workspace-fences.ts';

/** What a committed write did to the workspace's set of enabled geofences. */
export type IndexChange =
  | { kind: 'upsert'; id: string; geometry: FenceGeometry; rules?: FenceRules }
  | { kind: 'remove'; id: string };

export interface GeofenceIndexRegistryOptions {
  db: Db;
  clock: Clock;
  /** How stale another node's writes may be before a query re-reads the version counter. */
  checkIntervalMs: number;
  /** Evict a workspace's index after this long without a query; 0 = never (the default). */
  idleEvictMs?: number;
}

interface LoadedIndex {
  index: WorkspaceFences;
  /** The workspace version this index reflects: every change up to it, none after it. */
  version: number;
  checkedAtMs: number;
}

interface WorkspaceState {
  loaded: LoadedIndex | undefined;
  /** The load or version check in flight; concurrent queries await the same one. */
  refreshing: Promise<void> | undefined;
  /** The highest version this node committed itself; an index behind it is refreshed first. */
  knownVersion: number;
  /** Local changes that arrived ahead of a missing version, applied once the gap is filled. */
  pending: Map<number, readonly IndexChange[]>;
  /** Full loads from storage so far (the first one and every reload). */
  loads: number;
  /** Clock time of the last query (for idle eviction). */
  lastUsedMs: number;
}

/**
 * Changes buffered behind a gap. A gap is another node's write (only a reload fills it) or a local
 * commit whose report is still on its way; past this many the buffer is dropped with the index and
 * the next query reloads, so memory stays bounded when nobody queries.
 */
const MAX_PENDING = 64;

export class GeofenceIndexRegistry {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #checkIntervalMs: number;
  readonly #idleEvictMs: number;
  readonly #workspaces = new Map<string, WorkspaceState>();
  #lastSweepMs = Number.NEGATIVE_INFINITY;

  constructor(options: GeofenceIndexRegistryOptions) {
    this.#db = options.db;
    this.#clock = options.clock;
    this.#checkIntervalMs = options.checkIntervalMs;
    this.#idleEvictMs = options.idleEvictMs ?? 0;
  }

  /** Ids of the workspace's enabled geofences containing the point (boundary inside), in no order. */
  async query(workspaceId: string, lng: number, lat: number): Promise<string[]> {
    return (await this.indexFor(workspaceId)).query(lng, lat);
  }

  /** The workspace's index, loaded or refreshed first when needed. */
  async indexFor(workspaceId: string): Promise<WorkspaceFences> {
    const now = this.#clock.now().getTime();
    this.#evictIdle(now);
    const state = this.#state(workspaceId);
    state.lastUsedMs = now;
    // A second round covers a local commit reported while the first refresh was reading.
    for (let round = 0; round < 2 && this.#needsRefresh(state); round++) {
      await this.#refresh(workspaceId, state);
    }
    if (!state.loaded) throw new Error(`geofence index of workspace ${workspaceId} failed to load`);
    return state.loaded.index;
  }

  /**
   * Reports a committed write: `version` is the workspace version its transaction produced. Called
   * by the service after commit, in any order relative to other writes; changes are applied in
   * version order. A write of many geofences (a batch) bumps the version once and reports all its
   * changes under it, so other nodes reload once and this node applies them together.
   */
  applyCommitted(workspaceId: string, version: number, change: IndexChange | readonly IndexChange[]): void {
    const state = this.#workspaces.get(workspaceId);
    // Never used on this node: its first query loads from storage, this write included.
    if (!state) return;
    state.knownVersion = Math.max(state.knownVersion, version);
    if (state.loaded && version <= state.loaded.version) return; // already reflected by a reload
    // Nothing loaded and nothing loading: the next query loads from storage anyway.
    if (!state.loaded && !state.refreshing) return;
    state.pending.set(version, 'kind' in change ? [change] : change);
    if (state.pending.size > MAX_PENDING) {
      state.loaded = undefined;
      state.pending.clear();
      return;
    }
    this.#drain(state);
  }

  /** Drops a workspace's index (e.g. the workspace was deleted); the next query reloads it. */
  forget(workspaceId: string): void {
    this.#workspaces.delete(workspaceId);
  }

  /**
   * Drops the indexes of workspaces not queried for `idleEvictMs` (none in flight), at most once per
   * quarter of that period, so a query costs one comparison in between.
   */
  #evictIdle(now: number): void {
    const idle = this.#idleEvictMs;
    if (idle <= 0 || (now - this.#lastSweepMs < idle / 4 && now >= this.#lastSweepMs)) return;
    this.#lastSweepMs = now;
    for (const [workspaceId, state] of this.#workspaces) {
      // A clock that went backwards counts as use, so nothing is evicted by mistake.
      if (state.refreshing === undefined && now - state.lastUsedMs >= idle)
        this.#workspaces.delete(workspaceId);
    }
  }

  /** Loaded workspaces: version, geofence count and full loads so far (for metrics and tests). */
  stats(): Array<{ workspaceId: string; version: number; size: number; loads: number }> {
    return [...this.#workspaces].flatMap(([workspaceId, s]) =>
      s.loaded ? [{ workspaceId, version: s.loaded.version, size: s.loaded.index.size, loads: s.loads }] : [],
    );
  }

  #state(workspaceId: string): WorkspaceState {
    let state = this.#workspaces.get(workspaceId);
    if (!state) {
      state = {
        loaded: undefined,
        refreshing: undefined,
        knownVersion: 0,
        pending: new Map(),
        loads: 0,
        lastUsedMs: this.#clock.now().getTime(),
      };
      this.#workspaces.set(workspaceId, state);
    }
    return state;
  }

  #needsRefresh(state: WorkspaceState): boolean {
    const loaded = state.loaded;
    if (!loaded) return true;
    if (loaded.version < state.knownVersion) return true;
    const now = this.#clock.now().getTime();
    // A clock that went backwards also triggers a check rather than freezing the index.
    return now - loaded.checkedAtMs >= this.#checkIntervalMs || now < loaded.checkedAtMs;
  }

  #refresh(workspaceId: string, state: WorkspaceState): Promise<void> {
    state.refreshing ??= this.#checkAndReload(workspaceId, state).finally(() => {
      state.refreshing = undefined;
    });
    return state.refreshing;
  }

  async #checkAndReload(workspaceId: string, state: WorkspaceState): Promise<void> {
    const checkedAtMs = this.#clock.now().getTime();
    // The version is read BEFORE the rows: a write committing in between makes the rows newer
    // than the version we record, which costs one more reload later but never loses the write.
    const version = await readIndexVersion(this.#db, workspaceId);
    if (state.loaded && state.loaded.version >= version) {
      state.loaded.checkedAtMs = checkedAtMs;
      return;
    }
    const entries = await loadIndexEntries(this.#db, workspaceId);
    const index = WorkspaceFences.build(entries);
    state.loads += 1;
    // Local changes may have moved the current index past what we read meanwhile; keep the newer.
    if (state.loaded && state.loaded.version >= version) {
      state.loaded.checkedAtMs = checkedAtMs;
      return;
    }
    state.loaded = { index, version, checkedAtMs };
    this.#drain(state);
  }

  /** Applies buffered changes that continue the loaded version without a gap, in order. */
  #drain(state: WorkspaceState): void {
    const loaded = state.loaded;
    if (!loaded) return;
    for (const v of state.pending.keys()) if (v <= loaded.version) state.pending.delete(v);
    for (let changes = state.pending.get(loaded.version + 1); changes; ) {
      state.pending.delete(loaded.version + 1);
      for (const change of changes) {
        if (change.kind === 'upsert')
          loaded.index.upsert(change.id, change.geometry, change.rules ?? NO_RULES);
        else loaded.index.remove(change.id);
      }
      loaded.version += 1;
      changes = state.pending.get(loaded.version + 1);
    }
  }
}
