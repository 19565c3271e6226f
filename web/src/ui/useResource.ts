/**
 * Loads one API answer for a page and reloads it when `key` changes or `reload()` is called.
 * An answer that arrives after the key moved on is dropped, and the answer of another key is never
 * returned: after a filter change `data` is null (loading) until this filter's answer arrives, so
 * no render shows the previous filter's rows under the new filter. `reload()` keeps the rows shown.
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
  const [answer, setAnswer] = useState<{ key: string; data: T } | null>(null);
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
      .then((result) => {
        if (abort.signal.aborted) return;
        if (result.data !== undefined) {
          setAnswer({ key, data: result.data });
          setError(null);
        } else setError(errorMessage(result.error));
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
  const data = answer !== null && answer.key === key ? answer.data : null;
  return { data, error, loading, reload };
}
