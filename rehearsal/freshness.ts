/**
 * Time to fresh: how long after a drill's kill the crowd's view was right again. Fresh means every
 * event the seat availability consumer applied took less than FRESH_LIMIT_MS from the seat
 * service's commit, and stayed so: a drill is fresh again when the last event that took longer,
 * up to the next drill's kill (the end of the run for the last), reached it. Pure: the rehearsal
 * feeds it what the databases hold (the outbox's created_at, the inbox's received_at).
 */

/** Commit → seat availability latency under which the availability pages are fresh. */
export const FRESH_LIMIT_MS = 1_000;

/** The consumer whose freshness drills are measured by: the availability pages the crowd reads. */
export const FRESHNESS_CONSUMER = 'seat-availability';

/** What freshness is judged from, for one consumer. */
export interface FreshnessInput {
  /** When each event that took FRESH_LIMIT_MS or more from commit reached the consumer. */
  slowAt: readonly number[];
  /** When each event reached it. */
  receivedAt: readonly number[];
}

/**
 * When the consumer was fresh again after `from`, for good until `to`: the arrival of the last slow
 * event in [from, to), or `from` when none was slow (never stale). Null when no event reached it in
 * that window at all: nothing to judge by (a drill after the crowd had gone).
 */
export function freshAt(input: FreshnessInput, from: number, to: number): number | null {
  const inWindow = (at: number) => at >= from && at < to;
  if (!input.receivedAt.some(inWindow)) return null;
  return input.slowAt.reduce((last, at) => (inWindow(at) && at > last ? at : last), from);
}

/**
 * True when the last event to reach the consumer in [from, to) was itself slow: the pages were
 * still stale when the window closed (the next drill struck, or the run ended), so freshAt is only
 * the last arrival the window saw, not a time the pages were right again.
 */
export function staleAtEnd(input: FreshnessInput, from: number, to: number): boolean {
  const inWindow = (at: number) => at >= from && at < to;
  const last = (times: readonly number[]) =>
    times.reduce((max, at) => (inWindow(at) && at > max ? at : max), -Infinity);
  const lastSlow = last(input.slowAt);
  return lastSlow !== -Infinity && lastSlow >= last(input.receivedAt);
}

/** freshAt from arrivals as a load generator sees them: when each event arrived and how long after its commit. */
export function freshAtOf(
  arrivals: ReadonlyArray<{ at: number; tookMs: number }>,
  from: number,
  to = Infinity,
): number | null {
  const slowAt = arrivals.filter((a) => a.tookMs >= FRESH_LIMIT_MS).map((a) => a.at);
  return freshAt({ slowAt, receivedAt: arrivals.map((a) => a.at) }, from, to);
}
