/** p50, p99 and max (nearest rank) of a list of numbers; NaN for an empty list. */
export function percentiles(values: readonly number[]): { p50: number; p99: number; max: number; count: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (p: number) =>
    sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))] ?? Number.NaN;
  return { p50: rank(0.5), p99: rank(0.99), max: sorted.at(-1) ?? Number.NaN, count: sorted.length };
}
