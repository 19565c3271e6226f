/**
 * Where keyboard focus goes when the page changes under it. A focused element that is removed or
 * disabled (a row revoked, a submit button busy, a page replaced) leaves focus on `<body>`, and a
 * keyboard or screen-reader user starts over at the top of the document. These helpers move it
 * to what the change produced, but never away from an element the reader chose meanwhile.
 */

/** True when nothing has focus: it fell back to `<body>` after its element went away. */
export function focusIsLost(): boolean {
  const active = document.activeElement;
  return active === null || active === document.body;
}

/** Focuses `element`, made focusable by script only (tabIndex -1) if it is not focusable already. */
export function focusOn(element: HTMLElement | null): void {
  if (!element) return;
  if (element.tabIndex < 0 && !element.hasAttribute('tabindex')) element.tabIndex = -1;
  element.focus();
}

/** The first field of `container` (an input, select or text area that can be used). */
export function firstField(container: HTMLElement | null): HTMLElement | null {
  return (
    container?.querySelector<HTMLElement>(
      'input:not([type="hidden"]):not(:disabled), select:not(:disabled), textarea:not(:disabled)',
    ) ?? null
  );
}
