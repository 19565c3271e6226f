/**
 * The body of the WAL checkpoint thread (see wal-checkpointer.ts): its own connection to the
 * database file, copying committed WAL frames into the database with PASSIVE checkpoints, which
 * never wait for or block the writer. Runs until the parent terminates the thread.
 */
import { DatabaseSync } from 'node:sqlite';
import { parentPort, workerData } from 'node:worker_threads';

interface CheckpointWorkerData {
  path: string;
  intervalMs: number;
}

const { path, intervalMs } = workerData as CheckpointWorkerData;
const db = new DatabaseSync(path);
// Never wait on a lock: a checkpoint that finds the file busy simply runs again next interval.
db.exec('PRAGMA busy_timeout = 0');
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');

// The last report sent: a periodic run that finds nothing new (an idle database) sends none.
let lastLog = -1;
let lastCheckpointed = -1;

/** One checkpoint; its report carries `requestId` when the parent asked for this run. */
function run(requestId?: number): void {
  try {
    const row = checkpoint.get() as { busy: number; log: number; checkpointed: number } | undefined;
    if (!row) throw new Error('wal_checkpoint returned no row');
    const changed = row.log !== lastLog || row.checkpointed !== lastCheckpointed;
    lastLog = row.log;
    lastCheckpointed = row.checkpointed;
    if (changed || requestId !== undefined)
      parentPort?.postMessage({ log: row.log, checkpointed: row.checkpointed, requestId });
  } catch (error) {
    // SQLITE_BUSY (another process is checkpointing) is expected of a periodic run; anything else,
    // and any failure of a requested run (its caller waits for an answer), is reported.
    if (requestId !== undefined || !/busy|locked/i.test(String(error)))
      parentPort?.postMessage({ error: String(error), requestId });
  }
}

const timer = setInterval(() => run(), intervalMs);
parentPort?.on('message', (message: unknown) => {
  if (message === 'stop') {
    clearInterval(timer);
    run();
    db.close();
    parentPort?.close();
  } else if (typeof message === 'object' && message !== null && 'checkpoint' in message) {
    run((message as { checkpoint: number }).checkpoint);
  }
});
