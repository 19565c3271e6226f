/** React bindings of the shared stream: a page subscribes with hooks and never owns the connection. */
import { useEffect, useRef, useSyncExternalStore } from 'react';
import { useAuth } from '../auth/AuthProvider.tsx';
import {
  onStreamReady,
  onStreamStatus,
  type StreamStatus,
  setStreamWorkspace,
  streamStatus,
  subscribe,
} from './stream.ts';
import type { StreamTopic, TopicPayload } from './stream-types.ts';

export function useStreamStatus(): StreamStatus {
  return useSyncExternalStore(onStreamStatus, streamStatus);
}

/**
 * Calls the newest `handler` for every message of `topic` while the component is mounted. The
 * handler runs outside React: it should queue work, not set state per message.
 */
export function useStreamTopic<T extends StreamTopic>(
  topic: T,
  handler: (payload: TopicPayload[T]) => void,
): void {
  const latest = useRef(handler);
  useEffect(() => {
    latest.current = handler;
  });
  const { me } = useAuth();
  const workspaceId = me?.workspace_id ?? null;
  useEffect(() => setStreamWorkspace(workspaceId), [workspaceId]);
  useEffect(() => subscribe(topic, (payload) => latest.current(payload)), [topic]);
}

/** Calls the newest `listener` each time the stream becomes live (`reconnected`: it had been before). */
export function useStreamReady(listener: (reconnected: boolean) => void): void {
  const latest = useRef(listener);
  useEffect(() => {
    latest.current = listener;
  });
  useEffect(() => onStreamReady((reconnected) => latest.current(reconnected)), []);
}
