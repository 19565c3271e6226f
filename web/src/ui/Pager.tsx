/**
 * Previous/next paging over the API's envelope (`pagination: {total, offset, limit, has_more}`).
 * The offset lives in the URL (`offset`, or another key when a page has two lists), so a paged,
 * filtered view is a link.
 */
import { useEffect } from 'react';
import { setQuery } from '../app/router.ts';

export interface Pagination {
  total: number;
  offset: number;
  limit: number;
  has_more: boolean;
}

export function Pager({
  pagination,
  shown,
  noun = 'items',
  queryKey = 'offset',
}: {
  pagination: Pagination;
  /** Rows on this page. */
  shown: number;
  noun?: string;
  queryKey?: string;
}) {
  const { offset, limit, total, has_more } = pagination;
  return (
    <nav className="pager" aria-label={`Pages of ${noun}`}>
      <button
        type="button"
        disabled={offset === 0}
        onClick={() => setQuery({ [queryKey]: offset > limit ? String(offset - limit) : null })}
      >
        Previous page
      </button>
      <span className="pager-range">
        {shown === 0
          ? `No ${noun}`
          : `${(offset + 1).toLocaleString()}–${(offset + shown).toLocaleString()} of ${total.toLocaleString()}`}
      </span>
      <button
        type="button"
        disabled={!has_more}
        onClick={() => setQuery({ [queryKey]: String(offset + shown) })}
      >
        Next page
      </button>
    </nav>
  );
}

/** The offset a list shows, read from the URL; anything but a whole number ≥ 0 is the first page. */
export function offsetOf(query: URLSearchParams, queryKey = 'offset'): number {
  const offset = Number(query.get(queryKey) ?? 0);
  return Number.isInteger(offset) && offset > 0 ? offset : 0;
}

/**
 * A page past the end of its list (rows retried, read or deleted meanwhile, or an old link) would
 * show "nothing" with no pager to go back: move to the last page that has rows instead.
 */
export function useLastPageWhenPastEnd(
  pagination: Pagination | null | undefined,
  shown: number,
  queryKey = 'offset',
): void {
  const pastEnd = pagination != null && shown === 0 && pagination.offset > 0;
  // Never forward: a total that disagrees with the empty page still ends on an earlier page.
  const last = pagination
    ? Math.max(
        0,
        Math.min(
          Math.floor((pagination.total - 1) / pagination.limit) * pagination.limit,
          pagination.offset - pagination.limit,
        ),
      )
    : 0;
  useEffect(() => {
    if (pastEnd) setQuery({ [queryKey]: last > 0 ? String(last) : null });
  }, [pastEnd, last, queryKey]);
}
