/**
 * The poll loop: read the slots, correct max_slot_wal_keep_size, turn conditions into alert
 * starts and ends, hand those to the sinks, and re-send active alerts on a timer.
 */
import { errorMessage } from '../../lib/errors.js';
import type { Logger } from '../../lib/logger.js';
import type { AlertSink } from '../alerting/alert-sinks.js';
import { AlertTracker, type AlertCandidate } from './alert-tracker.js';
import type { KeepSizeGuard } from './keep-size.js';
import type { SlotMonitorMetrics } from './metrics.js';
import type { Queryable } from './monitor-role.js';
import { slotAlertCandidates, type SlotRules } from './slot-conditions.js';
import { SlotHistory } from './slot-history.js';
import { readDatabase, type OutboxTable } from './slot-readings.js';

export interface SlotMonitorOptions {
  db: Queryable;
  /** `host:port/database`, the `database` label of every alert. */
  databaseLabel: string;
  rules: SlotRules;
  outbox: OutboxTable;
  growthWindowPolls: number;
  pollIntervalMs: number;
  resendIntervalMs: number;
  keepSize: KeepSizeGuard;
  sinks: readonly AlertSink[];
  metrics: SlotMonitorMetrics;
  logger: Logger;
}

/** Resolved alerts are re-sent to Alertmanager this long, so a lost "resolved" is repeated (Prometheus does 15 min). */
const RESOLVED_RESEND_MS = 15 * 60 * 1000;

const WATCHDOG: AlertCandidate = {
  name: 'Watchdog',
  labels: {},
  summary: 'The slot monitor is alive. This alert always fires; page when it stops arriving.',
  description: 'Heartbeat of the slot monitor (the Alertmanager Watchdog convention). Route it to a dead man\'s switch.',
};

export class SlotMonitor {
  readonly #options: SlotMonitorOptions;
  readonly #tracker: AlertTracker;
  readonly #history: SlotHistory;
  readonly #stopped = new AbortController();
  #pollTimer: NodeJS.Timeout | undefined;
  #resendTimer: NodeJS.Timeout | undefined;
  #currentPoll: Promise<void> | undefined;
  #lastPollOk: boolean | undefined;

  constructor(options: SlotMonitorOptions) {
    this.#options = options;
    this.#tracker = new AlertTracker({ service: 'slot-monitor', database: options.databaseLabel });
    this.#history = new SlotHistory(options.growthWindowPolls);
  }

  /** True once a poll has read the database and while the last one did. */
  get lastPollOk(): boolean {
    return this.#lastPollOk === true;
  }

  /** Polls at once, then every pollIntervalMs; re-sends active alerts every resendIntervalMs. */
  start(): void {
    this.#schedulePoll(0);
    this.#resendTimer = setInterval(() => this.#resend(), this.#options.resendIntervalMs);
  }

  /** Stops polling and waits for a poll in progress. Alerts stay as they are (Alertmanager expires them). */
  async stop(): Promise<void> {
    this.#stopped.abort();
    clearTimeout(this.#pollTimer);
    clearInterval(this.#resendTimer);
    await this.#currentPoll;
  }

  #schedulePoll(delayMs: number): void {
    if (this.#stopped.signal.aborted) return;
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
    const now = new Date();
    const began = performance.now();
    let candidates: AlertCandidate[];
    try {
      candidates = await this.#readConditions(now);
      this.#noteReachable(true);
    } catch (err) {
      this.#noteReachable(false, err);
      candidates = this.#unreachableConditions(err);
    }
    this.#options.metrics.recordPoll(this.lastPollOk, (performance.now() - began) / 1000, now);
    const events = this.#tracker.update([...candidates, WATCHDOG], now);
    for (const sink of this.#options.sinks) sink.publish(events, now);
    this.#options.metrics.recordAlerts(this.#tracker.active());
  }

  async #readConditions(now: Date): Promise<AlertCandidate[]> {
    const { db, outbox, keepSize, rules, metrics } = this.#options;
    const reading = await readDatabase(db, outbox);
    const keepSizeCandidates = await keepSize.check(db, reading.maxSlotWalKeepSizeBytes, now);
    this.#history.observe(reading);
    metrics.recordReading(reading, this.#history, rules.slots);
    return [...slotAlertCandidates(reading, this.#history, rules), ...keepSizeCandidates];
  }

  /** Slot alerts that were firing stay firing (nobody knows they cleared), plus the unreachable alert. */
  #unreachableConditions(err: unknown): AlertCandidate[] {
    const carried = this.#tracker.activeCandidates((alert) => alert.name !== 'Watchdog' && alert.name !== 'SlotMonitorDatabaseUnreachable');
    const where = this.#options.databaseLabel;
    return [
      ...carried,
      {
        name: 'SlotMonitorDatabaseUnreachable',
        labels: {},
        summary: `The slot monitor cannot reach the seat database ${where}, so it cannot see the replication slots.`,
        description: `Polling pg_replication_slots on ${where} failed: ${errorMessage(err)}`,
      },
    ];
  }

  #noteReachable(ok: boolean, err?: unknown): void {
    const { logger, databaseLabel } = this.#options;
    if (!ok && this.#lastPollOk !== false) logger.error({ err, database: databaseLabel }, 'cannot poll the seat database');
    else if (!ok) logger.debug({ err, database: databaseLabel }, 'seat database still unreachable');
    else if (this.#lastPollOk !== true) logger.info({ database: databaseLabel }, 'polling the seat database');
    this.#lastPollOk = ok;
  }

  #resend(): void {
    const now = new Date();
    const active = this.#tracker.active();
    const resolved = this.#tracker.recentlyResolved(now, RESOLVED_RESEND_MS);
    for (const sink of this.#options.sinks) sink.resend(active, resolved, now);
  }
}
