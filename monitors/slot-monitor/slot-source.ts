/**
 * What the slot monitor reads on each poll: the slots, max_slot_wal_keep_size (corrected when it
 * drifted, never below what a slot retains), the WAL position (its peak rate) and the outbox, turned into the conditions that hold now. The loop around it (alert
 * starts and ends, re-sending, the heartbeat) is monitors/alerting/poll-loop.ts.
 */
import { errorMessage } from '../../lib/errors.js';
import type { ConditionSource } from '../alerting/poll-loop.js';
import type { AlertName } from './alert-catalog.js';
import type { AlertCandidate } from './alert-tracker.js';
import type { KeepSizeGuard } from './keep-size.js';
import type { SlotMonitorMetrics } from './metrics.js';
import type { Queryable } from './monitor-role.js';
import { slotAlertCandidates, type SlotRules } from './slot-conditions.js';
import { SlotHistory } from './slot-history.js';
import { readDatabase, type OutboxTable } from './slot-readings.js';
import { findPrimary, standbySlotConditions, withNodeClient, type StandbyRules } from './standby-slots.js';
import { WalRate, walBurstCandidate, type WalBurstRules } from './wal-rate.js';
import { SLOT_ALERTS } from '../alerts/slot-alerts.js';

export interface SlotConditionSourceOptions {
  db: Queryable;
  /** `host:port/database`, named in the unreachable alert. */
  databaseLabel: string;
  /** The configured seat database (the first node when there are standbys). */
  databaseUrl: string;
  standby: StandbyRules;
  rules: SlotRules & WalBurstRules;
  outbox: OutboxTable;
  growthWindowPolls: number;
  keepSize: KeepSizeGuard;
  metrics: SlotMonitorMetrics;
}

export class SlotConditionSource implements ConditionSource<AlertName> {
  readonly #options: SlotConditionSourceOptions;
  readonly #history: SlotHistory;
  readonly #walRate: WalRate;

  constructor(options: SlotConditionSourceOptions) {
    this.#options = options;
    this.#history = new SlotHistory(options.growthWindowPolls);
    this.#walRate = new WalRate(options.rules.walRateWindowMs);
  }

  async readConditions(now: Date): Promise<AlertCandidate[]> {
    const { db, databaseUrl, standby, metrics } = this.#options;
    if (standby.standbyUrls.length === 0) return this.#readPrimary(db, now);
    // With standbys: whichever node is not in recovery is the primary (it changes at a failover).
    const { primary, standbys } = await findPrimary(db, databaseUrl, standby);
    const read = async (primaryDb: Queryable) => {
      const slots = await this.#readPrimary(primaryDb, now);
      const copies = await standbySlotConditions(primaryDb, standbys, standby);
      metrics.recordStandbySlots(primary.label, copies.states);
      return [...slots, ...copies.candidates];
    };
    return primary.url === databaseUrl ? read(db) : withNodeClient(primary.url, read);
  }

  async #readPrimary(db: Queryable, now: Date): Promise<AlertCandidate[]> {
    const { outbox, keepSize, rules, metrics } = this.#options;
    const reading = await readDatabase(db, outbox);
    const keepSizeCandidates = await keepSize.check(db, reading.maxSlotWalKeepSizeBytes, reading.slots, now);
    this.#history.observe(reading);
    this.#walRate.observe(reading.takenAt, reading.walPositionBytes);
    const peakRate = this.#walRate.peakBytesPerSecond();
    metrics.recordReading(reading, this.#history, rules.slots);
    metrics.recordWalRate(reading.walPositionBytes, peakRate, rules);
    const burst = walBurstCandidate(reading, peakRate, rules);
    return [...slotAlertCandidates(reading, this.#history, rules), ...keepSizeCandidates, ...(burst ? [burst] : [])];
  }

  unreachableAlert(err: unknown): AlertCandidate {
    const where = this.#options.databaseLabel;
    return {
      name: 'SlotMonitorDatabaseUnreachable',
      labels: {},
      summary: SLOT_ALERTS.SlotMonitorDatabaseUnreachable.summary({ where }),
      description: `Polling pg_replication_slots on ${where} failed: ${errorMessage(err)}`,
    };
  }
}
