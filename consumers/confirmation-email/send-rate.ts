/**
 * How fast the email consumer may send, pure: a multiplicative decrease and increase on the
 * provider's answers. A
 * throttling answer (421, 451) halves the pace, from the rate actually achieved, at most once a
 * step; a step with acceptances and no throttling raises it by half, back to the configured
 * ceiling (or to no pacing at all when none is configured). A provider that throttles at R per
 * second is sent to at between R/2 and R; one that stops throttling is back at full speed within
 * seconds (from 50/s to unpaced in about 6.5 s).
 */

export interface SendRatePolicy {
  /** Sends per second at most (SMTP_RATE_LIMIT); Infinity: unpaced until the provider throttles. */
  ceiling: number;
  /** The pace never falls below this, so a throttling provider is still probed. */
  floor: number;
  /** How often the pace may change. */
  stepMs: number;
}

export const DEFAULT_SEND_RATE_POLICY: Omit<SendRatePolicy, 'ceiling'> = { floor: 5, stepMs: 500 };

/** Above this the pace no longer binds anything on one process: it is dropped. */
const UNPACED_ABOVE = 10_000;
const DECREASE = 0.5;
const INCREASE = 1.5;

export interface SendRate {
  /** Sends per second now allowed; Infinity: not paced. */
  rate: number;
  /** When the pace last changed; a raise waits a whole step after any change. */
  changedAt: number;
  /** When the pace was last halved; one halving a step, however many answers said "slow down". */
  decreasedAt: number;
  /** Sends started since `windowStart`, and in the one-second window before it: the rate achieved. */
  windowStart: number;
  windowCount: number;
  previousCount: number;
}

export function initialSendRate(policy: SendRatePolicy, now: number): SendRate {
  return {
    rate: policy.ceiling,
    changedAt: now,
    decreasedAt: -Infinity,
    windowStart: now,
    windowCount: 0,
    previousCount: 0,
  };
}

/** A send starts: counted toward the rate achieved. */
export function sendStarted(state: SendRate, now: number): SendRate {
  if (now - state.windowStart < 1000) return { ...state, windowCount: state.windowCount + 1 };
  const previousCount = now - state.windowStart < 2000 ? state.windowCount : 0;
  return { ...state, windowStart: now, windowCount: 1, previousCount };
}

/** The sends per second achieved lately: the last whole second, or the current one if it is busier. */
function achieved(state: SendRate, now: number): number {
  const current = (state.windowCount * 1000) / Math.max(1000, now - state.windowStart);
  return Math.max(state.previousCount, current);
}

/** The provider answered "slow down": halve the pace (from what was achieved), at most once a step. */
export function throttled(state: SendRate, policy: SendRatePolicy, now: number): SendRate {
  if (now - state.decreasedAt < policy.stepMs) return state;
  const from = Math.min(state.rate, Math.max(achieved(state, now), policy.floor));
  return { ...state, rate: Math.max(policy.floor, from * DECREASE), changedAt: now, decreasedAt: now };
}

/** The provider accepted a message: a whole step since the last change raises the pace. */
export function accepted(state: SendRate, policy: SendRatePolicy, now: number): SendRate {
  if (!Number.isFinite(state.rate) || now - state.changedAt < policy.stepMs) return state;
  const raised = state.rate * INCREASE;
  const rate = raised >= policy.ceiling ? policy.ceiling : raised > UNPACED_ABOVE ? Infinity : raised;
  return { ...state, rate, changedAt: now };
}

/** The pace's next free slot after `nextAt`, and the one after it: when a send may start. */
export function nextSlot(state: SendRate, nextAt: number, now: number): { startAt: number; nextAt: number } {
  if (!Number.isFinite(state.rate)) return { startAt: now, nextAt: now };
  const startAt = Math.max(now, nextAt);
  return { startAt, nextAt: startAt + 1000 / state.rate };
}
