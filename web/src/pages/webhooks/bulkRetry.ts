/**
 * "Retry selected" on the dead-letter page: the ids go to POST /webhooks/dlq/retry in chunks (the
 * endpoint takes at most 100; smaller chunks let the page show progress), one request at a time.
 * A chunk that fails as a whole counts its ids as failed with the request's error.
 */
import { errorMessage } from '../../api/client.ts';
import type { BulkRetryAnswer } from './types.ts';
import { retryDeadLetters } from './webhooksApi.ts';

export const CHUNK = 10;

export interface BulkProgress {
  total: number;
  /** Ids answered so far (queued or failed). */
  done: number;
  retried: BulkRetryAnswer['retried'];
  failed: BulkRetryAnswer['failed'];
}

export async function retryInChunks(
  ids: string[],
  onProgress: (progress: BulkProgress) => void,
): Promise<BulkProgress> {
  const progress: BulkProgress = { total: ids.length, done: 0, retried: [], failed: [] };
  onProgress({ ...progress });
  for (let start = 0; start < ids.length; start += CHUNK) {
    const chunk = ids.slice(start, start + CHUNK);
    const { data, error } = await retryDeadLetters(chunk).catch((failure: unknown) => ({
      data: undefined,
      error: { detail: failure instanceof Error ? failure.message : String(failure) },
    }));
    if (data) {
      progress.retried = [...progress.retried, ...data.retried];
      progress.failed = [...progress.failed, ...data.failed];
    } else {
      const detail = errorMessage(error);
      const code = (error as { error_code?: string } | undefined)?.error_code ?? 'REQUEST_FAILED';
      progress.failed = [
        ...progress.failed,
        ...chunk.map((dlq_id) => ({ dlq_id, error_code: code, detail })),
      ];
    }
    progress.done += chunk.length;
    onProgress({ ...progress });
  }
  return progress;
}
