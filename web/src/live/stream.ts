/**
 * The tab's one live-stream connection (server-sent events), shared by every page: opened when the
 * first handler subscribes, closed when the last one leaves or the session ends.
 *
 * EventSource cannot send an Authorization header, so every connection carries a fresh short-lived
 * token from `POST /stream/tokens` in its URL. When a connection fails (its token has expired and
 * the server ended it, the network dropped, the server restarted) it is closed — never left to
 * EventSource's own retry, which would reuse the dead token — and reopened with a new token after a
 * back-off of 1 s doubling to 30 s. A connection that had been live for a while ended normally and
 * is reopened at once. `onStreamReady` tells pages each time the stream is (again) live, so they
 * can refetch what may have been missed while it was not.
 */

import { api } from '../api/client.ts';
import { isSignedIn, onSessionChange } from '../auth/session.ts';
import { STREAM_TOPICS, type StreamTopic, type TopicPayload } from './stream-types.ts';

/**
 * idle: nobody subscribed (or signed out); connecting: first attempt; live: open and ready;
 * reconnecting: lost, trying again; unavailable: this server has no stream (404), trying again slowly.
 */
export type StreamStatus = 'idle' | 'connecting' | 'live' | 'reconnecting' | 'unavailable';

type Handler<T extends StreamTopic> = (payload: TopicPayload[T]) => void;
type ReadyListener = (reconnected: boolean) => void;

const handlers: { [T in StreamTopic]: Set<Handler<T>> } = { locations: new Set(), events: new Set() };
const statusListeners = new Set<() => void>();
const readyListeners = new Set<ReadyListener>();

const FIRST_DELAY_MS = 1000;
const MAX_DELAY_MS = 30_000;
/** A connection that was live this long ended normally (its token expired): reopen without waiting. */
const HEALTHY_MS = 10_000;

let status: StreamStatus = 'idle';
/** Topics of the connection that is live now; '' when none is. */
let liveTopics = '';
let source: EventSource | null = null;
/** Topics of the current connection or attempt; '' when closed. */
let openTopics = '';
/** Bumped by every open and close, so the callbacks of an abandoned attempt do nothing. */
let generation = 0;
let failures = 0;
let retryTimer: ReturnType<typeof setTimeout> | undefined;
let liveSince = 0;
/** The stream was live since it was opened: its next `ready` is a reconnection. */
let wasLive = false;
let workspace: string | null = null;
let reconcileQueued = false;

/** Calls `handler` with every message of `topic` until the returned function is called. */
export function subscribe<T extends StreamTopic>(topic: T, handler: Handler<T>): () => void {
  handlers[topic].add(handler);
  queueReconcile();
  return () => {
    handlers[topic].delete(handler);
    queueReconcile();
  };
}

/** Delivers one message to the topic's handlers (what the connection does for each message). */
export function dispatch<T extends StreamTopic>(topic: T, payload: TopicPayload[T]): void {
  for (const handler of handlers[topic]) {
    try {
      handler(payload);
    } catch (error) {
      // One page's bug must not starve the others of messages.
      console.error(error);
    }
  }
}

export function streamStatus(): StreamStatus {
  return status;
}

export function onStreamStatus(listener: () => void): () => void {
  statusListeners.add(listener);
  return () => statusListeners.delete(listener);
}

/**
 * Resolves once a live connection carries `topic`, or the stream has failed to connect (it will keep
 * trying, and `onStreamReady` tells when it is back), or after `timeoutMs`. A page subscribes, waits
 * for this, then loads its snapshot: nothing can happen unseen between the two.
 */
export function whenStreamCarries(topic: StreamTopic, timeoutMs: number): Promise<void> {
  const settled = (): boolean =>
    (status === 'live' && liveTopics.split(',').includes(topic)) ||
    status === 'unavailable' ||
    (status === 'reconnecting' && failures > 0);
  return new Promise((resolve) => {
    if (settled()) {
      resolve();
      return;
    }
    const done = (): void => {
      statusListeners.delete(check);
      clearTimeout(timer);
      resolve();
    };
    const check = (): void => {
      if (settled()) done();
    };
    statusListeners.add(check);
    const timer = setTimeout(done, timeoutMs);
  });
}

/** Called each time the stream becomes live; `reconnected` when it had been live before. */
export function onStreamReady(listener: ReadyListener): () => void {
  readyListeners.add(listener);
  return () => readyListeners.delete(listener);
}

/**
 * The workspace the dashboard shows. A token is issued for the signed-in workspace, so after a
 * workspace switch the open connection (still the old workspace's) is replaced.
 */
export function setStreamWorkspace(id: string | null): void {
  if (id === workspace) return;
  const switched = workspace !== null;
  workspace = id;
  if (switched && openTopics) {
    close();
    queueReconcile();
  }
}

onSessionChange((signedIn) => {
  if (signedIn) queueReconcile();
  else close();
});

function setStatus(next: StreamStatus): void {
  if (next !== 'live') liveTopics = '';
  if (next === status) return;
  status = next;
  for (const listener of statusListeners) listener();
}

function wantedTopics(): string {
  return STREAM_TOPICS.filter((topic) => handlers[topic].size > 0).join(',');
}

/** Settles after the current task, so a page leaving and the next one arriving cost one reconnect. */
function queueReconcile(): void {
  if (reconcileQueued) return;
  reconcileQueued = true;
  setTimeout(() => {
    reconcileQueued = false;
    const topics = wantedTopics();
    if (!topics || !isSignedIn()) close();
    else if (topics !== openTopics) open(topics);
  }, 0);
}

function close(): void {
  generation += 1;
  clearTimeout(retryTimer);
  source?.close();
  source = null;
  openTopics = '';
  failures = 0;
  liveSince = 0;
  wasLive = false;
  setStatus('idle');
}

function open(topics: string): void {
  const attempt = ++generation;
  clearTimeout(retryTimer);
  source?.close();
  source = null;
  openTopics = topics;
  if (status === 'idle' || status === 'live') setStatus(wasLive ? 'reconnecting' : 'connecting');
  void connect(attempt, topics);
}

async function connect(attempt: number, topics: string): Promise<void> {
  let token: string;
  try {
    const { data, response } = await api.POST('/api/v1/stream/tokens');
    if (attempt !== generation) return;
    if (!data) {
      retry(attempt, response.status === 404 ? 'unavailable' : 'reconnecting');
      return;
    }
    token = data.token;
  } catch {
    if (attempt === generation) retry(attempt, 'reconnecting');
    return;
  }
  const url = `/api/v1/stream?token=${encodeURIComponent(token)}&topics=${encodeURIComponent(topics)}`;
  const es = new EventSource(url);
  source = es;
  es.addEventListener('ready', () => {
    if (attempt !== generation) return;
    failures = 0;
    liveSince = Date.now();
    const reconnected = wasLive;
    wasLive = true;
    liveTopics = topics;
    // Listeners run even when the status stays 'live' (a new connection for other topics).
    if (status === 'live') for (const listener of statusListeners) listener();
    setStatus('live');
    for (const listener of readyListeners) listener(reconnected);
  });
  es.addEventListener('location', (event) => {
    const payload = parse<TopicPayload['locations']>(event);
    if (payload && attempt === generation) dispatch('locations', payload);
  });
  es.addEventListener('geofence_event', (event) => {
    const payload = parse<TopicPayload['events']>(event);
    if (payload && attempt === generation) dispatch('events', payload);
  });
  es.addEventListener('error', () => {
    if (attempt !== generation) return;
    es.close();
    source = null;
    retry(attempt, 'reconnecting');
  });
}

function retry(attempt: number, next: StreamStatus): void {
  const healthy = liveSince > 0 && Date.now() - liveSince >= HEALTHY_MS;
  liveSince = 0;
  let delay = 0;
  if (next === 'unavailable') {
    // This server has no stream: it will not have one a second from now either.
    delay = MAX_DELAY_MS;
  } else if (!healthy) {
    // Jitter spreads the reconnections of many tabs after a server restart.
    delay = Math.min(MAX_DELAY_MS, FIRST_DELAY_MS * 2 ** failures) * (0.8 + Math.random() * 0.4);
    failures += 1;
  }
  setStatus(next);
  retryTimer = setTimeout(() => {
    if (attempt === generation) open(openTopics);
  }, delay);
}

function parse<T>(event: Event): T | null {
  try {
    return JSON.parse((event as MessageEvent<string>).data) as T;
  } catch {
    return null;
  }
}
