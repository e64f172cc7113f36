/**
 * What the runtime knows about each partition assigned to this member: one object per partition,
 * made when its first batch after a join arrives and dropped at the next join (a rebalance) or
 * at stop. A retry wait is never slept inside kafkajs's eachBatch (kafkajs fetches again only
 * when every batch of the last fetch is done, so one sleeping partition would stop them all): the
 * partition is paused, its retry facts are kept here, a timer resumes it, and its next batch goes
 * on from these facts. The choices themselves are pure functions (`nextStep` here, `decide` in
 * decision.ts), tested on their own.
 */
import type { Unit } from './decision.js';
import type { DeadLetterReason } from './failures.js';

/** A unit of work waiting out a retry: the partition is held at its first record. */
export interface Hold {
  /** The first record of the unit; the partition's next batch starts here. */
  offset: string;
  /** `group`: the group starting at `offset` is tried whole again; `record`: that record alone; `dead-letter`: its dead letter is sent again. */
  unit: Unit;
  /** When the unit first failed: the deadlines' late-retry window and the dead letter's first failure. */
  failingSinceMs: number;
  /** Tries of the unit so far in this process: the backoff's attempt. */
  attempt: number;
  /** A record's durable count, as last counted. */
  attempts?: number;
  /** What the dead letter says (unit `dead-letter`). */
  deadLetter?: DeadLetterFacts;
}

export interface DeadLetterFacts {
  reason: DeadLetterReason;
  error: string;
  attempts: number;
}

export interface PartitionState {
  readonly topic: string;
  readonly partition: number;
  /** An offset was committed since this member joined: the next group cannot be a redelivery of a crash. */
  committed: boolean;
  /** Attempt counts written by this member and not yet cleared. */
  counted: boolean;
  /** Records up to this offset are processed one at a time (a group failed as poison, or crashed the process). */
  alone?: { throughOffset: string; failingSinceMs: number | undefined };
  hold?: Hold;
}

// ── decisions (pure) ──────────────────────────────────────────────────────────────────────────

export type Step =
  | { kind: 'group'; hold: Hold | undefined; count: boolean }
  | { kind: 'alone'; hold: Hold | undefined; failingSinceMs: number | undefined }
  | { kind: 'dead-letter'; hold: Hold & { deadLetter: DeadLetterFacts } };

/**
 * What to do with the partition's record at `offset`, the first not yet done: go on with the hold
 * there, process it alone while isolating, or apply a group from it. A group may be a redelivery
 * after a crash until the partition commits: each try of it is counted durably before it is decoded.
 */
export function nextStep(state: Pick<PartitionState, 'committed' | 'alone' | 'hold'>, offset: string): Step {
  const hold = state.hold?.offset === offset ? state.hold : undefined;
  if (hold?.unit === 'dead-letter' && hold.deadLetter !== undefined)
    return { kind: 'dead-letter', hold: { ...hold, deadLetter: hold.deadLetter } };
  if (hold?.unit === 'record') return { kind: 'alone', hold, failingSinceMs: hold.failingSinceMs };
  if (state.alone !== undefined && BigInt(offset) <= BigInt(state.alone.throughOffset))
    return { kind: 'alone', hold: undefined, failingSinceMs: state.alone.failingSinceMs };
  return { kind: 'group', hold, count: !state.committed };
}

/** After a group's durable count: an earlier try of it never came back (the process died), or its first record alone counts a failure. */
export function crashedBefore(count: { unfinishedBefore: number; headRecordAttempts: number }): boolean {
  return count.unfinishedBefore > 0 || count.headRecordAttempts > 0;
}

// ── the states of this member's partitions ────────────────────────────────────────────────────

/** What a dropped state leaves to undo (report the partition free again). */
export type ReleaseState = (state: PartitionState) => Promise<void>;

/**
 * This member's partition states, and the timers that resume held partitions. `dropAll` at every
 * join and at stop: timers cleared, paused partitions resumed, each state released.
 */
export class PartitionStates {
  readonly #states = new Map<string, PartitionState>();
  readonly #timers = new Map<string, { timer: NodeJS.Timeout; resume: () => void }>();
  readonly #release: ReleaseState;
  #releasing: Promise<void> = Promise.resolve();
  #closed = false;

  constructor(release: ReleaseState) {
    this.#release = release;
  }

  of(topic: string, partition: number): PartitionState {
    const key = `${topic}/${partition}`;
    let state = this.#states.get(key);
    if (state === undefined) {
      state = { topic, partition, committed: false, counted: false };
      this.#states.set(key, state);
    }
    return state;
  }

  /** Pauses the partition (through `pause`, which returns its resume) and resumes it after `delayMs`; false once closed. */
  holdFor(state: PartitionState, pause: () => () => void, delayMs: number): boolean {
    if (this.#closed) return false;
    const key = `${state.topic}/${state.partition}`;
    this.#clearTimer(key, false);
    const resume = pause();
    const timer = setTimeout(() => {
      this.#timers.delete(key);
      resume();
    }, delayMs);
    this.#timers.set(key, { timer, resume });
    return true;
  }

  /** Partitions paused now, waiting for their timer. */
  held(): number {
    return this.#timers.size;
  }

  /** Forgets every partition (a join: the assignment may have changed; the offsets are the committed ones again). */
  dropAll(): void {
    for (const key of [...this.#timers.keys()]) this.#clearTimer(key, true);
    const dropped = [...this.#states.values()];
    this.#states.clear();
    const previous = this.#releasing;
    this.#releasing = previous
      .then(() => Promise.allSettled(dropped.map((state) => this.#release(state))))
      .then(() => undefined);
  }

  /** Resolves when the releases of dropped states are done (a new batch waits for them before counting). */
  released(): Promise<void> {
    return this.#releasing;
  }

  /** At stop: no new holds, every state dropped and released. */
  async close(): Promise<void> {
    this.#closed = true;
    this.dropAll();
    await this.#releasing;
  }

  #clearTimer(key: string, resume: boolean): void {
    const entry = this.#timers.get(key);
    if (entry === undefined) return;
    clearTimeout(entry.timer);
    this.#timers.delete(key);
    if (resume) entry.resume();
  }
}
