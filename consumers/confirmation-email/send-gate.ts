/**
 * The one gate every confirmation email of a process goes through, whatever its partition: at
 * most `maxInFlight` sends at once (a provider allows many connections, not unlimited ones), at
 * the pace send-rate.ts allows. A send that would wait for its turn, or for a slot, longer than
 * `maxWaitMs` is not started: it fails as `smtp_throttled` (not performed, with the wait as its
 * retry hint), so the runtime gives up its claim and holds its partition (heartbeating) instead of
 * a lane sleeping past the group's session.
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

/** The gate did not start the send (nothing left the building): its claim can go at once, retried after `retryAfterMs`. */
function notStarted(message: string, retryAfterMs: number): TransientError {
  return new TransientError('smtp_throttled', message, { details: { retryAfterMs, notPerformed: true } });
}

export class SendGate {
  private readonly policy: SendRatePolicy;
  private readonly now: () => number;
  private rate: SendRate;
  private nextAt = 0;
  private inFlight = 0;
  private readonly waiters: (() => void)[] = [];

  constructor(private readonly options: SendGateOptions) {
    // A monotonic clock: a wall clock stepped back would keep the next slot in the future.
    this.now = options.now ?? (() => performance.now());
    const ceiling = options.ratePerSecond > 0 ? options.ratePerSecond : Infinity;
    this.policy = { ...DEFAULT_SEND_RATE_POLICY, ceiling, floor: Math.min(DEFAULT_SEND_RATE_POLICY.floor, ceiling) };
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

  /** A slot in flight, waited for at most `maxWaitMs` (every slot busy with a provider that hangs): then refused. */
  private async enter(): Promise<void> {
    if (this.inFlight < this.options.maxInFlight) {
      this.inFlight += 1;
      return;
    }
    // The slot is handed over by leave(): inFlight stays counted for the waiter.
    await new Promise<void>((resolve, reject) => {
      const waiter = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        reject(
          notStarted(
            `all ${this.options.maxInFlight} sends in flight (SMTP_CONCURRENCY) stayed busy for ${this.options.maxWaitMs} ms: the provider is slow; its partition waits instead`,
            this.options.maxWaitMs,
          ),
        );
      }, this.options.maxWaitMs);
      this.waiters.push(waiter);
    });
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
      throw notStarted(
        `the SMTP provider asked us to slow down; at ${this.rate.rate.toFixed(1)} emails/s this one would wait ${Math.round(waitMs)} ms, more than ${this.options.maxWaitMs} ms: its partition waits instead`,
        waitMs,
      );
    }
    this.nextAt = slot.nextAt;
    if (waitMs > 0) await sleep(waitMs);
  }
}
