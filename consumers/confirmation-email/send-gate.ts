/**
 * The one gate every confirmation email of a process goes through, whatever its partition: at
 * most `maxInFlight` sends at once (a provider allows many connections, not unlimited ones), at
 * the pace send-rate.ts allows. A send that would wait for its turn longer than `maxWaitMs` is not
 * started: it fails as `smtp_throttled` with the wait as its retry hint, so the runtime holds its
 * partition (heartbeating) instead of a lane sleeping past the group's session.
 */
import { TransientError } from '../runtime/failures.js';
import { sleep } from '../../lib/wait.js';
import {
  type SendRate,
  type SendRatePolicy,
  DEFAULT_SEND_RATE_POLICY,
  accepted,
  initialSendRate,
  nextSlot,
  sendStarted,
  throttled,
} from './send-rate.js';

export interface SendGateOptions {
  maxInFlight: number;
  /** Sends per second at most; 0: unpaced until the provider throttles. */
  ratePerSecond: number;
  /** The longest a send waits for its turn before it fails as throttled. */
  maxWaitMs: number;
  now?: () => number;
}

export interface SendGateSnapshot {
  inFlight: number;
  waiting: number;
  /** Sends per second allowed now; Infinity when not paced. */
  rate: number;
}

/** Whether an error is the provider saying "slow down" (its code is smtp_throttled). */
function isThrottle(err: unknown): boolean {
  return err instanceof TransientError && err.code === 'smtp_throttled';
}

export class SendGate {
  private readonly policy: SendRatePolicy;
  private readonly now: () => number;
  private rate: SendRate;
  private nextAt = 0;
  private inFlight = 0;
  private readonly waiters: (() => void)[] = [];

  constructor(private readonly options: SendGateOptions) {
    this.now = options.now ?? Date.now;
    this.policy = {
      ...DEFAULT_SEND_RATE_POLICY,
      ceiling: options.ratePerSecond > 0 ? options.ratePerSecond : Infinity,
    };
    this.rate = initialSendRate(this.policy, this.now());
  }

  snapshot(): SendGateSnapshot {
    return { inFlight: this.inFlight, waiting: this.waiters.length, rate: this.rate.rate };
  }

  /** Runs `send` when its turn comes; its throttle answers slow every later send down. */
  async send<T>(send: () => Promise<T>): Promise<T> {
    await this.enter();
    try {
      await this.waitForPace();
    } catch (err) {
      // The gate's own "not now" is no answer of the provider's: the pace stays where it is.
      this.leave();
      throw err;
    }
    try {
      this.rate = sendStarted(this.rate, this.now());
      const result = await send();
      this.rate = accepted(this.rate, this.policy, this.now());
      return result;
    } catch (err) {
      if (isThrottle(err)) this.rate = throttled(this.rate, this.policy, this.now());
      throw err;
    } finally {
      this.leave();
    }
  }

  private async enter(): Promise<void> {
    if (this.inFlight < this.options.maxInFlight) {
      this.inFlight += 1;
      return;
    }
    // The slot is handed over by leave(): inFlight stays counted for the waiter.
    await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  private leave(): void {
    const next = this.waiters.shift();
    if (next !== undefined) next();
    else this.inFlight -= 1;
  }

  private async waitForPace(): Promise<void> {
    const now = this.now();
    const slot = nextSlot(this.rate, this.nextAt, now);
    const waitMs = slot.startAt - now;
    if (waitMs > this.options.maxWaitMs) {
      throw new TransientError(
        'smtp_throttled',
        `the SMTP provider asked us to slow down; at ${this.rate.rate.toFixed(1)} emails/s this one would wait ${Math.round(waitMs)} ms, more than ${this.options.maxWaitMs} ms: its partition waits instead`,
        { details: { retryAfterMs: waitMs } },
      );
    }
    this.nextAt = slot.nextAt;
    if (waitMs > 0) await sleep(waitMs);
  }
}
