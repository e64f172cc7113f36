/**
 * Delivers to one destination in order, retrying each delivery with capped, jittered backoff.
 * A delivery that keeps failing is logged and dropped; nothing here ever throws at the caller,
 * so a dead Alertmanager or webhook never stops the monitor.
 */
import { errorMessage } from '../../lib/errors.js';
import type { Logger } from '../../lib/logger.js';
import { retryDelay, sleep } from '../../lib/wait.js';

export type DeliveryOutcome = 'delivered' | 'retried' | 'failed';

export interface DeliveryQueueOptions {
  /** The destination: "alertmanager", "webhook". */
  sink: string;
  attempts: number;
  timeoutMs: number;
  logger: Logger;
  /** Deliveries waiting beyond this are dropped (oldest first) with an error log. */
  maxPending?: number;
  onOutcome?: (sink: string, outcome: DeliveryOutcome) => void;
}

type Send = (signal: AbortSignal) => Promise<void>;

/**
 * scheme://host[:port] of a URL, the only part of a destination that is ever logged: a webhook URL
 * often carries a token in its path or query, and userinfo carries a password.
 */
export function urlOrigin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '[secret]';
  }
}

/** Text with every URL in it cut to its origin (fetch puts the whole URL in some of its errors). */
function withOriginsOnly(text: string): string {
  return text.replace(/[a-z][a-z0-9+.-]*:\/\/[^\s'"<>]+/gi, (url) => urlOrigin(url));
}

/** POSTs JSON; throws unless the answer is 2xx. Its errors name the destination by its origin only. */
export async function postJson(url: string, body: unknown, signal: AbortSignal): Promise<void> {
  const where = urlOrigin(url);
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal,
    });
  } catch (err) {
    const reason =
      err instanceof Error && err.cause !== undefined
        ? `${err.message}: ${errorMessage(err.cause)}`
        : errorMessage(err);
    // The cause is left off on purpose: fetch's errors may hold the whole URL, token included.
    // eslint-disable-next-line preserve-caught-error
    throw new Error(`POST to ${where} failed: ${withOriginsOnly(reason)}`);
  }
  if (!response.ok) {
    const text = await response.text().catch(() => '');
    throw new Error(
      `POST to ${where} answered ${response.status} ${response.statusText}: ${withOriginsOnly(text.slice(0, 300))}`,
    );
  }
  await response.body?.cancel();
}

export class DeliveryQueue {
  readonly #options: DeliveryQueueOptions;
  readonly #pending: { what: string; send: Send }[] = [];
  readonly #closing = new AbortController();
  #running: Promise<void> | undefined;

  constructor(options: DeliveryQueueOptions) {
    this.#options = options;
  }

  /** Queues a delivery; `what` names it in logs ("2 alerts"). */
  enqueue(what: string, send: Send): void {
    if (this.#closing.signal.aborted) return;
    this.#pending.push({ what, send });
    const maxPending = this.#options.maxPending ?? 200;
    while (this.#pending.length > maxPending) {
      const dropped = this.#pending.shift();
      this.#options.logger.error(
        { sink: this.#options.sink, what: dropped?.what },
        'delivery queue full: dropped the oldest delivery',
      );
      this.#options.onOutcome?.(this.#options.sink, 'failed');
    }
    this.#running ??= this.#drain().finally(() => {
      this.#running = undefined;
    });
  }

  /** Resolves when everything queued so far was delivered or given up. */
  async idle(): Promise<void> {
    while (this.#running) await this.#running;
  }

  /** Gives queued deliveries up to `graceMs` to finish, then stops retrying and drops the rest. */
  async close(graceMs = 2_000): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, graceMs);
    });
    await Promise.race([this.idle(), grace]);
    clearTimeout(timer);
    this.#closing.abort();
    this.#pending.length = 0;
    await this.idle();
  }

  async #drain(): Promise<void> {
    for (let next = this.#pending.shift(); next !== undefined; next = this.#pending.shift()) {
      await this.#deliver(next.what, next.send);
    }
  }

  async #deliver(what: string, send: Send): Promise<void> {
    const { sink, attempts, timeoutMs, logger, onOutcome } = this.#options;
    for (let attempt = 1; attempt <= attempts && !this.#closing.signal.aborted; attempt += 1) {
      try {
        await send(AbortSignal.any([AbortSignal.timeout(timeoutMs), this.#closing.signal]));
        onOutcome?.(sink, 'delivered');
        return;
      } catch (err) {
        const last = attempt === attempts;
        onOutcome?.(sink, last ? 'failed' : 'retried');
        if (last) {
          logger.error(
            { sink, what, attempt, error: errorMessage(err) },
            `delivery to ${sink} failed ${attempts} times; dropped it`,
          );
          return;
        }
        const delayMs = retryDelay({ attempt: attempt - 1, baseMs: 250, capMs: 5_000 });
        logger.warn({ sink, what, attempt, delayMs, error: errorMessage(err) }, `delivery to ${sink} failed; retrying`);
        await sleep(delayMs, { signal: this.#closing.signal }).catch(() => undefined);
      }
    }
  }
}
