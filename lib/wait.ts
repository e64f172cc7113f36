/**
 * Waiting done right: poll a condition against a deadline, and back off with
 * capped exponential delays and full jitter.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { inspect } from 'node:util';
import { errorMessage } from './errors.js';

/** Resolves after `ms` milliseconds (rejects early with an AbortError if `signal` aborts). For backoff, not for tests. */
export async function sleep(ms: number, options: { signal?: AbortSignal } = {}): Promise<void> {
  await delay(ms, undefined, options.signal ? { signal: options.signal } : undefined);
}

export interface RetryDelayOptions {
  /** 0 for the first retry, 1 for the second, … */
  attempt: number;
  baseMs: number;
  capMs: number;
  /** A number in [0, 1); injectable for tests. */
  random?: () => number;
}

/**
 * Capped exponential backoff with full jitter (AWS Architecture Blog, "Exponential
 * Backoff And Jitter"): a whole number of ms in [0, min(cap, base * 2^attempt)).
 */
export function retryDelay({ attempt, baseMs, capMs, random = Math.random }: RetryDelayOptions): number {
  const ceiling = Math.min(capMs, baseMs * 2 ** Math.max(0, attempt));
  return Math.floor(random() * ceiling);
}

export type Truthy<T> = Exclude<T, false | 0 | 0n | '' | null | undefined>;

export interface WaitForOptions {
  timeoutMs: number;
  intervalMs?: number;
  /** What is awaited, for the timeout message: "consumer group g1 to be stable". */
  description: string;
}

type Observation = { kind: 'none' } | { kind: 'value'; value: unknown } | { kind: 'error'; error: unknown };

const TIMED_OUT = Symbol('timed out');

function describeObservation(seen: Observation): string {
  switch (seen.kind) {
    case 'none':
      return 'the condition never completed';
    case 'value':
      return `last value: ${inspect(seen.value, { depth: 3, breakLength: Infinity })}`;
    case 'error':
      return `last error: ${errorMessage(seen.error)}`;
  }
}

async function evaluateBefore<T>(
  condition: () => T | Promise<T>,
  deadline: number,
): Promise<Awaited<T> | typeof TIMED_OUT> {
  const controller = new AbortController();
  const timer = delay<typeof TIMED_OUT>(Math.max(0, deadline - Date.now()), TIMED_OUT, {
    signal: controller.signal,
  }).catch((): typeof TIMED_OUT => TIMED_OUT);
  try {
    return await Promise.race([Promise.resolve().then(condition), timer]);
  } finally {
    controller.abort();
  }
}

/**
 * Calls `condition` every `intervalMs` until it returns (or resolves to) a truthy
 * value, and returns that value. A throwing condition counts as "not yet". After
 * `timeoutMs` it throws an Error naming `description` and the last value or error seen.
 */
export async function waitFor<T>(
  condition: () => T | Promise<T>,
  options: WaitForOptions,
): Promise<Truthy<Awaited<T>>> {
  const { timeoutMs, intervalMs = 100, description } = options;
  const deadline = Date.now() + timeoutMs;
  let seen: Observation = { kind: 'none' };
  for (;;) {
    try {
      const result = await evaluateBefore(condition, deadline);
      if (result !== TIMED_OUT) {
        if (result) return result as Truthy<Awaited<T>>;
        seen = { kind: 'value', value: result };
      }
    } catch (error) {
      seen = { kind: 'error', error };
    }
    const remaining = deadline - Date.now();
    if (remaining <= 0) {
      throw new Error(`Timed out after ${timeoutMs} ms waiting for ${description}; ${describeObservation(seen)}.`);
    }
    await delay(Math.min(intervalMs, remaining));
  }
}
