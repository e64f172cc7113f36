/**
 * When a supervised process that died is started again: at once, the way systemd's
 * `Restart=always` or a Kubernetes pod's container restart would; and, when it keeps dying, after a
 * delay that doubles up to a cap (Kubernetes' crash-loop back-off), so that a process that cannot
 * start does not take the CPU from the rest. A process that stayed up long enough starts over at
 * once the next time it dies.
 */
export interface RestartPolicy {
  /** Delay before the second start of a crash loop; each further one doubles it. */
  backoffBaseMs: number;
  /** The longest delay between two starts. */
  backoffMaxMs: number;
  /** Up this long, a process is no longer crash-looping: its next death restarts it at once. */
  stableAfterMs: number;
}

export const RESTART_POLICY: RestartPolicy = { backoffBaseMs: 1000, backoffMaxMs: 30_000, stableAfterMs: 60_000 };

/** What the supervisor remembers of one process. */
export interface RestartHistory {
  /** Deaths in a row, each less than `stableAfterMs` after its start. */
  crashLoop: number;
  /** When it was last started (or first seen running). */
  startedAt: number;
}

export interface RestartDecision {
  delayMs: number;
  history: RestartHistory;
}

/** A process seen dead at `now`: how long to wait before starting it again, and the history after that start. */
export function restartAfterDeath(
  history: RestartHistory,
  now: number,
  policy: RestartPolicy = RESTART_POLICY,
): RestartDecision {
  const stable = now - history.startedAt >= policy.stableAfterMs;
  const crashLoop = stable ? 0 : history.crashLoop;
  const delayMs = crashLoop === 0 ? 0 : Math.min(policy.backoffMaxMs, policy.backoffBaseMs * 2 ** (crashLoop - 1));
  return { delayMs, history: { crashLoop: crashLoop + 1, startedAt: now + delayMs } };
}
