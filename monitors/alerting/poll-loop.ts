/**
 * The loop every polling monitor runs: read the database at once and then every poll interval
 * (one poll at a time), turn what it read into alerts through the AlertPublisher, which also
 * re-sends them on its timer, and record each poll in the metrics. A database that cannot be read
 * is an alert, never a crash: the alerts firing before stay firing, plus the monitor's own
 * "database unreachable" alert.
 */
import type { Logger } from '../../lib/logger.js';
import type { AlertPublisher } from './alert-publisher.js';
import type { AlertCandidate, TrackedAlert } from './alert-tracker.js';

/** What one monitor reads; the loop around it is the same for all. */
export interface ConditionSource<Name extends string> {
  /** Reads the database and returns the conditions that hold now; throws when it cannot read. */
  readConditions(now: Date): Promise<AlertCandidate<Name>[]>;
  /** The alert that fires while the database cannot be read, `err` being why. */
  unreachableAlert(err: unknown): AlertCandidate<Name>;
}

export interface PollOutcome {
  /** Whether the poll read the database. */
  ok: boolean;
  /** How long reading took (or failed to). */
  seconds: number;
  at: Date;
}

/** Where the loop records each poll (the monitor's metrics). */
export interface PollRecorder {
  recordPoll(poll: PollOutcome): void;
  recordAlerts(active: readonly TrackedAlert[]): void;
}

/** The log lines written when the database stops or starts answering. */
export interface ReachabilityMessages {
  /** "cannot poll the seat database" */
  unreachable: string;
  /** "polling the seat database" */
  reachable: string;
}

export interface PollLoopOptions<Name extends string> {
  source: ConditionSource<Name>;
  publisher: AlertPublisher<Name>;
  metrics: PollRecorder;
  pollIntervalMs: number;
  /** `host:port/database`, in the log lines. */
  databaseLabel: string;
  messages: ReachabilityMessages;
  logger: Logger;
}

export class PollLoop<Name extends string> {
  readonly #options: PollLoopOptions<Name>;
  #stopped = false;
  #pollTimer: NodeJS.Timeout | undefined;
  #currentPoll: Promise<void> | undefined;
  #lastPollOk: boolean | undefined;

  constructor(options: PollLoopOptions<Name>) {
    this.#options = options;
  }

  /** True once a poll has read the database and while the last one did. */
  get lastPollOk(): boolean {
    return this.#lastPollOk === true;
  }

  /** Polls at once, then every pollIntervalMs; re-sends active alerts on the publisher's timer. */
  start(): void {
    this.#schedulePoll(0);
    this.#options.publisher.startResending();
  }

  /** Stops polling and waits for a poll in progress. Alerts stay as they are (Alertmanager expires them). */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#pollTimer);
    this.#options.publisher.stopResending();
    await this.#currentPoll;
  }

  /** The next poll starts pollIntervalMs after the previous one started (at once if that one took longer). */
  #schedulePoll(delayMs: number): void {
    if (this.#stopped) return;
    this.#pollTimer = setTimeout(() => {
      const began = Date.now();
      this.#currentPoll = this.pollOnce().finally(() => {
        this.#currentPoll = undefined;
        this.#schedulePoll(Math.max(0, this.#options.pollIntervalMs - (Date.now() - began)));
      });
    }, delayMs);
  }

  /** One poll. Never throws: an unreachable database becomes an alert. */
  async pollOnce(): Promise<void> {
    const { source, publisher, metrics } = this.#options;
    const at = new Date();
    const began = performance.now();
    let candidates: AlertCandidate<Name>[];
    try {
      candidates = await source.readConditions(at);
      this.#noteReachable(true);
    } catch (err) {
      this.#noteReachable(false, err);
      candidates = publisher.carriedOverWith(source.unreachableAlert(err));
    }
    metrics.recordPoll({ ok: this.lastPollOk, seconds: (performance.now() - began) / 1000, at });
    metrics.recordAlerts(publisher.publish(candidates, at));
  }

  /** Logs when the database stops or starts answering, not on every poll. */
  #noteReachable(ok: boolean, err?: unknown): void {
    const { logger, databaseLabel, messages } = this.#options;
    if (!ok && this.#lastPollOk !== false) logger.error({ err, database: databaseLabel }, messages.unreachable);
    else if (!ok) logger.debug({ err, database: databaseLabel }, 'seat database still unreachable');
    else if (this.#lastPollOk !== true) logger.info({ database: databaseLabel }, messages.reachable);
    this.#lastPollOk = ok;
  }
}
