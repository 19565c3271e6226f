/**
 * bench:history-layout (ADR 008, "Alternatives considered": the staged history): what the
 * per-device history index costs SQLite when writes arrive in device order or not, and what a
 * write-optimised layout would save.
 *
 * Plain `node:sqlite` on a file in WAL mode with the server's settings, and a `locations` table with
 * the real columns and indexes (the per-device `(device_id, recorded_at)` index among them), filled
 * with `--history` rows first. Then `--rows` locations arrive in transactions of `--group` rows, for
 * devices drawn at random from `--devices`, stored two ways on fresh files:
 *  - direct: inserted into `locations` itself, as ingestion does today. Each row's index entry lands
 *    after its device's newest entry, in the middle of the B-tree: with more devices than a
 *    transaction names, every row dirties a leaf of its own, and every dirty page is a WAL frame.
 *  - staged: inserted into `locations_recent`, the same columns without the device index (its
 *    entries only append), and moved into `locations` in (device, time) order every `--merge` rows,
 *    so that a leaf receives all of a merge's rows for its devices at once. Readers would have to
 *    look at both tables; that is the price, and why this is an experiment, not the design.
 * Prints main-thread wall time per location: insert, commit and (staged) merge. The last line is
 * one JSON object of the figures.
 * Usage: npm run bench:history-layout [-- --devices 200 --group 48 --history 100000 --rows 60000 --merge 20000]
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DatabaseSync, type SQLInputValue, type StatementSync } from 'node:sqlite';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    devices: { type: 'string', default: '200' },
    group: { type: 'string', default: '48' },
    history: { type: 'string', default: '100000' },
    rows: { type: 'string', default: '60000' },
    merge: { type: 'string', default: '20000' },
  },
});
const DEVICES = Number(values.devices);
const GROUP = Number(values.group);
const HISTORY = Number(values.history);
const ROWS = Number(values.rows);
const MERGE = Number(values.merge);

const COLUMNS = `id text primary key, workspace_id text not null, device_id text not null, session_id text,
  lng real not null, lat real not null, accuracy real, speed real, heading real, altitude real,
  metadata text not null, recorded_at text not null, received_at text not null, out_of_order integer not null`;

type Row = SQLInputValue[];

class Store {
  readonly db: DatabaseSync;
  readonly dir: string;
  private readonly statements = new Map<string, StatementSync>();
  private seq = 0;
  private readonly workspace = randomUUID();
  private readonly devices = Array.from({ length: DEVICES }, () => randomUUID());

  constructor() {
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-history-'));
    this.db = new DatabaseSync(path.join(this.dir, 'history.db'));
    // The server's settings (src/db/sqlite-driver.ts).
    this.db.exec('PRAGMA journal_mode = WAL');
    this.db.exec('PRAGMA synchronous = NORMAL');
    this.db.exec('PRAGMA cache_size = -65536');
    this.db.exec('PRAGMA wal_autocheckpoint = 10000');
    this.db.exec(`create table locations (${COLUMNS})`);
    this.db.exec('create index locations_device_recorded_idx on locations (device_id, recorded_at)');
    this.db.exec('create index locations_workspace_received_idx on locations (workspace_id, received_at)');
    this.db.exec(
      'create index locations_session_recorded_idx on locations (session_id, recorded_at) where session_id is not null',
    );
    this.db.exec(`create table locations_recent (${COLUMNS})`);
  }

  /** `count` rows of random devices, ids and times rising as ingestion makes them (UUIDv7-like). */
  rows(count: number): Row[] {
    const out: Row[] = [];
    for (let i = 0; i < count; i++) {
      this.seq++;
      const time = new Date(Date.UTC(2026, 0, 1) + this.seq * 10).toISOString();
      const device = this.devices[Math.floor(Math.random() * DEVICES)] as string;
      const id = `0190${String(this.seq).padStart(8, '0')}-0000-7000-8000-000000000000`;
      out.push([id, this.workspace, device, null, 13.4, 52.5, 5, null, null, null, '{}', time, time, 0]);
    }
    return out;
  }

  insert(table: string, rows: Row[]): void {
    const text = `insert into ${table} values ${rows.map(() => `(${'?,'.repeat(13)}?)`).join(',')}`;
    let statement = this.statements.get(text);
    if (!statement) {
      statement = this.db.prepare(text);
      this.statements.set(text, statement);
    }
    statement.run(...rows.flat());
  }

  close(): void {
    this.db.close();
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

interface Figures {
  insert_us: number;
  commit_us: number;
  merge_us: number;
  total_us: number;
}

function timed(fn: () => void): number {
  const started = performance.now();
  fn();
  return performance.now() - started;
}

function run(staged: boolean): Figures {
  const store = new Store();
  try {
    store.db.exec('begin');
    for (let n = 0; n < HISTORY; n += 1000)
      store.insert('locations', store.rows(Math.min(1000, HISTORY - n)));
    store.db.exec('commit');
    store.db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    let insertMs = 0;
    let commitMs = 0;
    let mergeMs = 0;
    let staging = 0;
    const groups = Math.ceil(ROWS / GROUP);
    for (let g = 0; g < groups; g++) {
      const rows = store.rows(GROUP);
      store.db.exec('begin immediate');
      insertMs += timed(() => store.insert(staged ? 'locations_recent' : 'locations', rows));
      commitMs += timed(() => store.db.exec('commit'));
      staging += GROUP;
      if (staged && staging >= MERGE) {
        mergeMs += timed(() => {
          store.db.exec('begin immediate');
          store.db.exec(
            'insert into locations select * from locations_recent order by device_id, recorded_at',
          );
          store.db.exec('delete from locations_recent');
          store.db.exec('commit');
        });
        staging = 0;
      }
    }
    const per = (ms: number) => Math.round(((ms * 1000) / (groups * GROUP)) * 100) / 100;
    return {
      insert_us: per(insertMs),
      commit_us: per(commitMs),
      merge_us: per(mergeMs),
      total_us: per(insertMs + commitMs + mergeMs),
    };
  } finally {
    store.close();
  }
}

const direct = run(false);
const staged = run(true);
console.log(
  `bench:history-layout — SQLite, ${DEVICES} devices drawn at random, ${HISTORY} rows stored before, ${ROWS} rows in transactions of ${GROUP}; main-thread wall time per location`,
);
const line = (name: string, f: Figures) =>
  `${name.padEnd(34)} insert ${f.insert_us} · commit ${f.commit_us} · merge ${f.merge_us} → ${f.total_us} µs per location`;
console.log(line('direct (the layout as it is)', direct));
console.log(line(`staged, merged every ${MERGE} rows`, staged));
console.log(`staged ÷ direct: ${Math.round((staged.total_us / direct.total_us) * 1000) / 1000}`);
console.log(
  JSON.stringify({
    bench: 'history-layout',
    devices: DEVICES,
    group: GROUP,
    history: HISTORY,
    rows: ROWS,
    merge: MERGE,
    direct,
    staged,
    staged_over_direct: Math.round((staged.total_us / direct.total_us) * 1000) / 1000,
  }),
);
