/**
 * How big the scenarios run: `full` for the figures in docs/performance.md, `small` a quick version
 * of each (minutes), `smoke` the least that still runs every code path of every scenario (what the
 * test suite runs, so the bench cannot rot; its figures mean nothing).
 */
export const SCALES = ['smoke', 'small', 'full'] as const;
export type Scale = (typeof SCALES)[number];

/** A scenario's size at each scale. */
export function atScale<T>(scale: Scale, sizes: Record<Scale, T>): T {
  return sizes[scale];
}
