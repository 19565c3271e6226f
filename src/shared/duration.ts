/** Parses human durations such as `15m`, `1h`, `30s`, `500ms`, `2d` into milliseconds. */
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

export function parseDuration(text: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(text.trim());
  if (!match) return undefined;
  const ms = Number(match[1]) * (UNIT_MS[match[2] ?? ''] ?? Number.NaN);
  return Number.isFinite(ms) && ms > 0 ? Math.round(ms) : undefined;
}

/** `15m,30m,1h` → [900000, 1800000, 3600000]; undefined when any item is malformed. */
export function parseDurationList(text: string): number[] | undefined {
  const parts = text.split(',').map(parseDuration);
  return parts.every((p): p is number => p !== undefined) ? parts : undefined;
}
