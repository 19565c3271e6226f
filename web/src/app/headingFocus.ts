/**
 * After a move to another page, focus goes to the new page's main heading (its h1, focusable by
 * script only): a screen reader reads where the reader arrived, and Tab continues from there, as
 * after a full page load, instead of from a `<body>` the old page's link left behind.
 */
import { useEffect } from 'react';
import { focusOn } from '../ui/focus.ts';
import { navigations } from './router.ts';

/** How long a page may take to show its heading (a lazily loaded page, its data). */
const WAIT_MS = 10_000;

export function useHeadingFocus(path: string): void {
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs once per page, and a page is a path
  useEffect(() => {
    // The page the browser opened (a link from elsewhere, a reload) starts at the top, as any site.
    if (navigations() === 0) return;
    const before = document.activeElement;
    const deadline = performance.now() + WAIT_MS;
    let frame = 0;
    const attempt = (): void => {
      const active = document.activeElement;
      // The reader went on meanwhile (typed in a field, opened the menu): focus stays theirs.
      if (active !== null && active !== document.body && active !== before) return;
      // The new page's: the old one may stay in the document, hidden, until the new one has loaded.
      const heading = [...document.querySelectorAll<HTMLElement>('main h1')].find(
        (h) => h.getClientRects().length > 0,
      );
      if (heading) focusOn(heading);
      if (document.activeElement !== heading && performance.now() < deadline)
        frame = requestAnimationFrame(attempt);
    };
    attempt();
    return () => cancelAnimationFrame(frame);
  }, [path]);
}
