/**
 * A count of what keeps this process alive or busy at one moment, and what a later count has more
 * of: timers and handles (sockets, servers, pipes, child processes) from
 * `process.getActiveResourcesInfo()`, worker threads and child processes still running (seen
 * through node's `worker_threads` and `child_process` diagnostics channels, since a worker is not
 * among the active resources), and the test helpers' open fixtures (open-fixtures.ts).
 * Unreferenced timers and handles are not counted: they neither keep the process alive nor make a
 * test hang, which is what a leak costs here.
 */
import type { ChildProcess } from 'node:child_process';
import diagnosticsChannel from 'node:diagnostics_channel';
import type { Worker } from 'node:worker_threads';
import { callerOutsideHelpers, type OpenFixture, openFixtures } from './open-fixtures.ts';

interface Started {
  readonly site: string;
}

const runningWorkers = new Map<Worker, Started>();
const startedChildren = new Map<ChildProcess, Started>();

/** From now on, record every worker thread and child process this process starts. */
export function watchWorkersAndChildren(): void {
  diagnosticsChannel.subscribe('worker_threads', (message) => {
    const { worker } = message as { worker: Worker };
    runningWorkers.set(worker, { site: callerOutsideHelpers() });
    worker.once('exit', () => runningWorkers.delete(worker));
  });
  diagnosticsChannel.subscribe('child_process', (message) => {
    const { process: child } = message as { process: ChildProcess };
    startedChildren.set(child, { site: callerOutsideHelpers() });
  });
}

function childRunning(child: ChildProcess): boolean {
  return child.pid !== undefined && child.exitCode === null && child.signalCode === null;
}

export interface Census {
  resources: Map<string, number>;
  workers: Set<Worker>;
  children: Set<ChildProcess>;
  fixtures: ReadonlySet<OpenFixture>;
}

export function takeCensus(): Census {
  const resources = new Map<string, number>();
  for (const type of process.getActiveResourcesInfo()) resources.set(type, (resources.get(type) ?? 0) + 1);
  for (const child of startedChildren.keys()) if (!childRunning(child)) startedChildren.delete(child);
  return {
    resources,
    workers: new Set(runningWorkers.keys()),
    children: new Set(startedChildren.keys()),
    fixtures: openFixtures(),
  };
}

/** Timer and handle types `now` counts more of than `before`, with how many more. */
export function moreResources(before: Census, now: Census): Map<string, number> {
  const more = new Map<string, number>();
  for (const [type, count] of now.resources) {
    const extra = count - (before.resources.get(type) ?? 0);
    if (extra > 0) more.set(type, extra);
  }
  return more;
}

/**
 * What `now` has that `before` had not, one phrase each: fixtures still open, worker threads and
 * child processes still running, and (unless `countResources` is false) timers and handles.
 */
export function newSince(before: Census, now: Census, countResources = true): string[] {
  const found: string[] = [];
  for (const fixture of now.fixtures) {
    if (!before.fixtures.has(fixture)) found.push(`${fixture.description} not closed`);
  }
  for (const worker of now.workers) {
    if (!before.workers.has(worker))
      found.push(`worker thread (${runningWorkers.get(worker)?.site}) running`);
  }
  for (const child of now.children) {
    if (before.children.has(child)) continue;
    const command = (child.spawnargs ?? []).join(' ');
    found.push(`child process \`${command}\` (${startedChildren.get(child)?.site}) running`);
  }
  if (countResources) {
    for (const [type, count] of moreResources(before, now)) found.push(`${count} × ${type}`);
  }
  return found;
}

/** Whether `now` has anything `before` had not, counting every kind. */
export function hasMoreThan(now: Census, before: Census): boolean {
  return newSince(before, now).length > 0;
}
