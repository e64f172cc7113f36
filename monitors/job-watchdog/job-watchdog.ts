/**
 * The poll loop: read job_runs and holds, turn the reading into alert starts and ends (plus the
 * Watchdog heartbeat), update the metrics. An unreachable database is an alert, never a crash.
 */
import { errorMessage } from '../../lib/errors.js';
import type { Logger } from '../../lib/logger.js';
import type { AlertPublisher } from '../alerting/alert-publisher.js';
import type { AlertCandidate, AlertTracker } from '../alerting/alert-tracker.js';
import type { JobAlertName } from './alert-catalog.js';
import { jobAlertCandidates, type JobRules } from './job-conditions.js';
import { readWatchdogState } from './job-readings.js';
import type { JobWatchdogMetrics } from './metrics.js';
import type { Queryable } from './watchdog-role.js';

type Candidate = AlertCandidate<JobAlertName>;

export interface JobWatchdogOptions {
  db: Queryable;
  /** `host:port/database`, the `database` label of every alert. */
  databaseLabel: string;
  rules: JobRules;
  pollIntervalMs: number;
  tracker: AlertTracker<JobAlertName>;
  publisher: AlertPublisher<JobAlertName>;
  metrics: JobWatchdogMetrics;
  logger: Logger;
}

export const WATCHDOG_HEARTBEAT: Candidate = {
  name: 'Watchdog',
  labels: {},
  summary: 'The job watchdog is alive. This alert always fires; page when it stops arriving.',
  description: 'Heartbeat of the job watchdog (the Alertmanager Watchdog convention). Route it to a dead man\'s switch.',
};

export class JobWatchdog {
  readonly #options: JobWatchdogOptions;
  readonly #startedAt = Date.now();
  #stopped = false;
  #timer: NodeJS.Timeout | undefined;
  #currentPoll: Promise<void> | undefined;
  #lastPollOk: boolean | undefined;

  constructor(options: JobWatchdogOptions) {
    this.#options = options;
  }

  get lastPollOk(): boolean {
    return this.#lastPollOk === true;
  }

  /** Polls at once, then every pollIntervalMs; re-sends active alerts on the publisher's timer. */
  start(): void {
    this.#schedule(0);
    this.#options.publisher.startResending();
  }

  /** Stops polling and waits for a poll in progress. Alerts stay as they are (Alertmanager expires them). */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#options.publisher.stopResending();
    await this.#currentPoll;
  }

  #schedule(delayMs: number): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      const began = Date.now();
      this.#currentPoll = this.pollOnce().finally(() => {
        this.#currentPoll = undefined;
        this.#schedule(Math.max(0, this.#options.pollIntervalMs - (Date.now() - began)));
      });
    }, delayMs);
  }

  /** One poll. Never throws. */
  async pollOnce(): Promise<void> {
    const now = new Date();
    let candidates: Candidate[];
    try {
      candidates = await this.#readConditions(now);
      this.#noteReachable(true);
    } catch (err) {
      this.#noteReachable(false, err);
      candidates = this.#unreachableConditions(err);
    }
    this.#options.metrics.recordPoll(this.lastPollOk, now);
    this.#options.metrics.recordAlerts(this.#options.publisher.publish(candidates, now));
  }

  async #readConditions(now: Date): Promise<Candidate[]> {
    const { db, rules, metrics } = this.#options;
    const reading = await readWatchdogState(db, rules.jobs, rules.overdueHoldGraceMs);
    const watchingForSeconds = (now.getTime() - this.#startedAt) / 1000;
    metrics.recordReading(reading, watchingForSeconds);
    return jobAlertCandidates(reading, rules, watchingForSeconds);
  }

  /** Job alerts that were firing stay firing (nobody knows they cleared), plus the unreachable alert. */
  #unreachableConditions(err: unknown): Candidate[] {
    const carried = this.#options.tracker.activeCandidates((alert) => alert.name !== 'Watchdog' && alert.name !== 'JobWatchdogDatabaseUnreachable');
    const where = this.#options.databaseLabel;
    return [
      ...carried,
      {
        name: 'JobWatchdogDatabaseUnreachable',
        labels: {},
        summary: `The job watchdog cannot reach the seat database ${where}, so nobody sees whether the hold sweeper runs.`,
        description: `Reading job_runs and holds on ${where} failed: ${errorMessage(err)}`,
      },
    ];
  }

  #noteReachable(ok: boolean, err?: unknown): void {
    const { logger, databaseLabel } = this.#options;
    if (!ok && this.#lastPollOk !== false) logger.error({ err, database: databaseLabel }, 'cannot read job_runs and holds');
    else if (ok && this.#lastPollOk !== true) logger.info({ database: databaseLabel }, 'watching job_runs and holds');
    this.#lastPollOk = ok;
  }
}
