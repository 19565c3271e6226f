/** The access-token lifetime's bounds (contract §2.4) and a reading of seconds for people. */
export const TTL_MIN = 300;
export const TTL_MAX = 2_592_000;

const UNITS: Array<[seconds: number, one: string, many: string]> = [
  [86_400, 'day', 'days'],
  [3_600, 'hour', 'hours'],
  [60, 'minute', 'minutes'],
  [1, 'second', 'seconds'],
];

/** 90,061 → "1 day, 1 hour, 1 minute and 1 second". */
export function describeSeconds(total: number): string {
  const parts: string[] = [];
  let rest = total;
  for (const [size, one, many] of UNITS) {
    const n = Math.floor(rest / size);
    rest -= n * size;
    if (n > 0) parts.push(`${n.toLocaleString()} ${n === 1 ? one : many}`);
  }
  if (parts.length <= 1) return parts[0] ?? '0 seconds';
  return `${parts.slice(0, -1).join(', ')} and ${parts.at(-1)}`;
}
