/**
 * Loads one API answer for a page and reloads it when `key` changes or `reload()` is called.
 * An answer that arrives after the key moved on is dropped, so a fast filter change never shows
 * the previous filter's rows.
 */
import { useCallback, useEffect, useRef, useState } from 'react';
import { errorMessage, thrownMessage } from '../api/client.ts';

/** What a typed openapi-fetch call answers. */
export interface ApiAnswer<T> {
  data?: T;
  error?: unknown;
}

export interface Resource<T> {
  data: T | null;
  error: string | null;
  loading: boolean;
  reload(): void;
}

export function useResource<T>(
  load: (signal: AbortSignal) => Promise<ApiAnswer<T>>,
  key: string,
): Resource<T> {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const [generation, setGeneration] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;

  // biome-ignore lint/correctness/useExhaustiveDependencies: reload when the key or generation changes
  useEffect(() => {
    const abort = new AbortController();
    setLoading(true);
    void loadRef
      .current(abort.signal)
      .then((answer) => {
        if (abort.signal.aborted) return;
        if (answer.data !== undefined) {
          setData(answer.data);
          setError(null);
        } else setError(errorMessage(answer.error));
        setLoading(false);
      })
      .catch((failure: unknown) => {
        if (abort.signal.aborted) return;
        setError(thrownMessage(failure));
        setLoading(false);
      });
    return () => abort.abort();
  }, [key, generation]);

  const reload = useCallback(() => setGeneration((n) => n + 1), []);
  return { data, error, loading, reload };
}
