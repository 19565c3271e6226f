/** A long text that scrolls in a box of its own: a focusable region, so a keyboard can scroll it too. */
export function ScrollRegion({
  label,
  className,
  children,
}: {
  label: string;
  /** Styles the box: its height limit and `overflow: auto`. */
  className: string;
  children: string;
}) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must take focus to be scrolled by keyboard
    <section tabIndex={0} aria-label={label} className={className}>
      <pre>{children}</pre>
    </section>
  );
}
