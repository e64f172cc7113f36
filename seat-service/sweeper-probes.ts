/**
 * What the hold sweeper answers on /healthz and /readyz, from the run slots it has tried: pure, so
 * the rules are unit-tested with given times (test/unit/seat-service/sweeper-probes.test.ts).
 */
import type { SweepRun } from './sweeper.js';

/** A sweeper whose loop has not finished a slot for this long is stuck (a query that never returns). */
export function stallLimitMs(intervalMs: number): number {
  return Math.max(10 * intervalMs, 5 * 60_000);
}

export type ProbeAnswer = { ok: true } | { ok: false; reason: string };

export interface SweeperProgress {
  /** When the loop started, epoch ms. */
  startedAt: number;
  /** The last run slot the loop finished, and when. */
  lastRun?: SweepRun;
  lastRunAt?: number;
  /** The loop has returned (after a signal). */
  ended: boolean;
}

/** Liveness: the loop is running and has finished a slot (or started) within the stall limit. */
export function sweeperLiveness(progress: SweeperProgress, now: number, intervalMs: number): ProbeAnswer {
  if (progress.ended) return { ok: false, reason: 'the sweep loop has ended' };
  const since = progress.lastRunAt ?? progress.startedAt;
  const limit = stallLimitMs(intervalMs);
  if (now - since > limit)
    return {
      ok: false,
      reason: `no run slot finished for ${Math.round((now - since) / 1000)} s (limit ${limit / 1000} s): the sweep loop is stuck`,
    };
  return { ok: true };
}

const NOT_READY: Readonly<Partial<Record<SweepRun['outcome'], string>>> = {
  claim_failed: 'the last run could not claim its slot in job_runs: the seat database does not answer or refuses',
  failed: 'the last run failed (its log line "hold sweep failed" says why)',
};

/** Readiness: a run slot has been tried, and the last one reached the database and did not fail. */
export function sweeperReadiness(progress: SweeperProgress): ProbeAnswer {
  if (progress.ended) return { ok: false, reason: 'the sweep loop has ended' };
  if (progress.lastRun === undefined) return { ok: false, reason: 'no run slot tried yet' };
  const reason = NOT_READY[progress.lastRun.outcome];
  return reason === undefined ? { ok: true } : { ok: false, reason };
}

/** The sweeper's progress as its loop reports it, and the two checks the metrics endpoint serves. */
export class SweeperProbes {
  readonly #progress: SweeperProgress;
  readonly #intervalMs: number;

  constructor(intervalMs: number, now = Date.now()) {
    this.#intervalMs = intervalMs;
    this.#progress = { startedAt: now, ended: false };
  }

  recordRun(run: SweepRun, now = Date.now()): void {
    this.#progress.lastRun = run;
    this.#progress.lastRunAt = now;
  }

  recordEnd(): void {
    this.#progress.ended = true;
  }

  /** For /healthz: throws the reason when not live. */
  health = (): boolean => answer(sweeperLiveness(this.#progress, Date.now(), this.#intervalMs));

  /** For /readyz: throws the reason when not ready. */
  ready = (): boolean => answer(sweeperReadiness(this.#progress));
}

function answer(outcome: ProbeAnswer): boolean {
  if (!outcome.ok) throw new Error(outcome.reason);
  return true;
}
