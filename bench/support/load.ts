/** Helpers shared by the HTTP benchmarks: child servers, autocannon runs, medians. */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import autocannon from 'autocannon';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

/** Starts `script` on `port` and waits until it answers /healthz; `nodeArgs` go before the script (e.g. --cpu-prof). */
export async function startServer(
  script: string,
  env: Record<string, string>,
  port: number,
  nodeArgs: readonly string[] = [],
): Promise<ChildProcess> {
  const child = spawn(process.execPath, [...nodeArgs, script], {
    env: { ...process.env, ...env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${script} exited with ${child.exitCode}`);
    try {
      const res = await fetch(`http://127.0.0.1:${port}/healthz`);
      if (res.ok) return child;
    } catch {
      // not yet listening
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${script} did not start`);
}

export async function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

/**
 * CPU time (user + system) a process has used, from /proc (Linux). CPU per request is far less
 * sensitive than req/s to other work on a shared machine, so benches report both.
 */
export function processCpuMs(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15 of the full line)
    return (ticks * 1000) / 100; // USER_HZ is 100 on Linux
  } catch {
    return undefined;
  }
}

export interface LoadResult {
  rps: number;
  /** Server CPU microseconds per request (when the server pid is known). */
  cpuUsPerReq: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}

export interface LoadRequest {
  url: string;
  method?: 'GET' | 'POST';
  body?: string;
  headers?: Record<string, string>;
  connections?: number;
  seconds?: number;
  /** The server process, to measure its CPU per request. */
  serverPid?: number | undefined;
}

export async function load(request: LoadRequest): Promise<LoadResult> {
  const cpuBefore = processCpuMs(request.serverPid);
  const result = await autocannon({
    url: request.url,
    method: request.method ?? 'GET',
    ...(request.body !== undefined ? { body: request.body } : {}),
    headers: { 'content-type': 'application/json', ...request.headers },
    connections: request.connections ?? 64,
    duration: request.seconds ?? 5,
  });
  const cpuAfter = processCpuMs(request.serverPid);
  const cpuUsPerReq =
    cpuBefore !== undefined && cpuAfter !== undefined && result.requests.total > 0
      ? Math.round(((cpuAfter - cpuBefore) * 1000 * 10) / result.requests.total) / 10
      : 0;
  return {
    rps: Math.round(result.requests.average),
    cpuUsPerReq,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
  };
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

/** The value at the p-th percentile (nearest rank, rounded down); NaN for no values. */
export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

export function summarize(runs: LoadResult[]): LoadResult {
  return {
    rps: median(runs.map((r) => r.rps)),
    cpuUsPerReq: median(runs.map((r) => r.cpuUsPerReq)),
    p50: median(runs.map((r) => r.p50)),
    p99: median(runs.map((r) => r.p99)),
    non2xx: runs.reduce((n, r) => n + r.non2xx, 0),
    errors: runs.reduce((n, r) => n + r.errors, 0),
  };
}

/** `n` rounded to `digits` decimals, for printed figures. */
export const round = (n: number, digits = 1): number => Math.round(n * 10 ** digits) / 10 ** digits;
