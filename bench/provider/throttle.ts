/**
 * When the email provider refuses, in one place, as pure functions of a clock value:
 *
 * - 421 (service not available, closing the connection) for a connection that arrives while
 *   `maxConnections` are open: the connection is refused, whatever it meant to send.
 * - 451 (try again later) for a message over the rate while throttling is on: the message is
 *   refused, the connection stays open for the next one.
 *
 * The rate is a token bucket: it holds at most one second's worth of messages (a burst of
 * `ratePerSecond` goes through at once), and refills at `ratePerSecond`.
 */

export interface Refusal {
  code: 421 | 451;
  text: string;
}

export const TOO_MANY_CONNECTIONS: Refusal = { code: 421, text: 'Too many connections, try again in a moment' };

export const RATE_EXCEEDED: Refusal = { code: 451, text: 'Rate limit exceeded, try again later' };

/** Whether one more connection may open while `open` are: the 421 rule. */
export function connectionRefusal(open: number, maxConnections: number): Refusal | undefined {
  return open >= maxConnections ? TOO_MANY_CONNECTIONS : undefined;
}

export interface RateGate {
  readonly ratePerSecond: number;
  /** Messages the bucket would let through now (fractional while it refills). */
  tokens: number;
  /** The clock value (ms) `tokens` was computed at. */
  at: number;
}

/** A full bucket at `nowMs`: the first second's worth of messages goes through at once. */
export function openGate(ratePerSecond: number, nowMs: number): RateGate {
  if (!Number.isFinite(ratePerSecond) || ratePerSecond <= 0)
    throw new RangeError(`ratePerSecond must be a positive number, not ${ratePerSecond}`);
  return { ratePerSecond, tokens: ratePerSecond, at: nowMs };
}

/**
 * Takes one message through the gate at `nowMs`: undefined when it may pass (a token is spent),
 * the 451 refusal when the rate is exceeded (nothing is spent). A clock going backwards refills
 * nothing. `gate` is updated in place.
 */
export function messageRefusal(gate: RateGate, nowMs: number): Refusal | undefined {
  const elapsed = Math.max(0, nowMs - gate.at);
  gate.tokens = Math.min(gate.ratePerSecond, gate.tokens + (elapsed * gate.ratePerSecond) / 1000);
  gate.at = Math.max(gate.at, nowMs);
  if (gate.tokens < 1) return RATE_EXCEEDED;
  gate.tokens -= 1;
  return undefined;
}
