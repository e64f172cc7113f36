/**
 * The slot monitor's Prometheus metrics, all in one place and on the program's own registry:
 * those of every polling monitor (PollMetrics: slot_monitor_database_up, _polls_total,
 * _alerts_firing, …) and what it reads. monitors/prometheus/slot-alerts.rules.yml alerts on these
 * for people who scrape.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { PollOutcome } from '../alerting/poll-loop.js';
import { PollMetrics } from '../alerting/poll-metrics.js';
import type { SlotHistory } from './slot-history.js';
import type { DatabaseReading, WalStatus } from './slot-readings.js';
import type { StandbySlotState } from './standby-slots.js';
import { burstBetweenConfirmations, type WalBurstRules } from './wal-rate.js';

const WAL_STATUSES: readonly WalStatus[] = ['reserved', 'extended', 'unreserved', 'lost'];

export class SlotMonitorMetrics extends PollMetrics<'slot_name'> {
  readonly #walStatus: Gauge<'slot_name' | 'wal_status'>;
  readonly #safeWalSize: Gauge<'slot_name'>;
  readonly #retained: Gauge<'slot_name'>;
  readonly #flushLag: Gauge<'slot_name'>;
  readonly #active: Gauge<'slot_name'>;
  readonly #inactiveSeconds: Gauge<'slot_name'>;
  readonly #present: Gauge<'slot_name'>;
  readonly #keepSize: Gauge;
  readonly #keepSizeTarget: Gauge;
  readonly #corrections: Counter;
  readonly #keepSizeMargin: Gauge;
  readonly #raiseHeld: Gauge;
  readonly #outboxInserts: Gauge;
  readonly #walPosition: Gauge;
  readonly #walPeakRate: Gauge;
  readonly #walBurst: Gauge;
  readonly #pollDuration: Histogram;
  readonly #primaryNode: Gauge<'node'>;
  readonly #standbySynced: Gauge<'slot_name' | 'standby'>;
  readonly #standbyLag: Gauge<'slot_name' | 'standby'>;

  constructor(registry: Registry, targetKeepSizeBytes: number, keepSizeMarginBytes: number) {
    super(registry, { prefix: 'slot_monitor', monitor: 'monitor', reads: 'the slots', alertLabel: 'slot_name' });
    const registers = [registry];
    const perSlot = (name: string, help: string) =>
      new Gauge({ name, help, labelNames: ['slot_name'] as const, registers });
    const single = (name: string, help: string) => new Gauge({ name, help, registers });
    this.#walStatus = new Gauge({
      name: 'slot_monitor_slot_wal_status',
      help: 'pg_replication_slots.wal_status: 1 on the current status of each slot, 0 on the others.',
      labelNames: ['slot_name', 'wal_status'] as const,
      registers,
    });
    this.#safeWalSize = perSlot(
      'slot_monitor_slot_safe_wal_size_bytes',
      'pg_replication_slots.safe_wal_size: bytes that can be written before the slot passes max_slot_wal_keep_size (absent when unlimited or lost).',
    );
    this.#retained = perSlot(
      'slot_monitor_slot_retained_wal_bytes',
      'pg_current_wal_lsn() - restart_lsn: WAL kept on disk for the slot.',
    );
    this.#flushLag = perSlot(
      'slot_monitor_slot_confirmed_flush_lag_bytes',
      "pg_current_wal_lsn() - confirmed_flush_lsn: how far the reader's acknowledgements trail.",
    );
    this.#active = perSlot('slot_monitor_slot_active', '1 while a process reads the slot.');
    this.#inactiveSeconds = perSlot(
      'slot_monitor_slot_inactive_seconds',
      'Seconds since the monitor first saw the slot inactive (0 while active).',
    );
    this.#present = perSlot(
      'slot_monitor_slot_present',
      '1 when the slot exists; 0 for a configured slot that is missing.',
    );
    this.#keepSize = single(
      'slot_monitor_max_slot_wal_keep_size_bytes',
      'max_slot_wal_keep_size of the seat database in bytes (-1: unlimited).',
    );
    this.#keepSizeTarget = single(
      'slot_monitor_max_slot_wal_keep_size_target_bytes',
      'The max_slot_wal_keep_size the monitor requires.',
    );
    this.#corrections = new Counter({
      name: 'slot_monitor_keep_size_corrections_total',
      help: 'Times the monitor set max_slot_wal_keep_size back to its target.',
      registers,
    });
    this.#keepSizeMargin = single(
      'slot_monitor_keep_size_margin_bytes',
      'SLOT_MONITOR_KEEP_SIZE_MARGIN in bytes: the monitor restores the target after a raise once every slot retains at most the target minus this.',
    );
    this.#raiseHeld = single(
      'slot_monitor_keep_size_raise_held',
      '1 while max_slot_wal_keep_size stands above the target because a slot retains more than the target minus the margin (SlotKeepSizeRaised); 0 otherwise.',
    );
    this.#outboxInserts = single(
      'slot_monitor_outbox_rows_inserted',
      'pg_stat_user_tables.n_tup_ins of the outbox table (absent when the table does not exist).',
    );
    this.#walPosition = single(
      'slot_monitor_wal_position_bytes',
      'pg_current_wal_lsn() in bytes: WAL written since the cluster was created (rate() of it is the WAL write rate).',
    );
    this.#walPeakRate = single(
      'slot_monitor_wal_peak_write_rate_bytes_per_second',
      'Highest WAL write rate between two polls within SLOT_MONITOR_WAL_RATE_WINDOW_MS (absent before two polls).',
    );
    this.#walBurst = single(
      'slot_monitor_wal_burst_between_confirmations_bytes',
      'WAL the peak rate writes between two confirmations of an active slot: peak rate × (15 s running-transactions interval + offset flush + heartbeat interval) × margin; SlotCapTooSmallForWalRate fires when max_slot_wal_keep_size is smaller.',
    );
    this.#pollDuration = new Histogram({
      name: 'slot_monitor_poll_duration_seconds',
      help: 'Time one poll took.',
      buckets: [0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
      registers,
    });
    this.#primaryNode = new Gauge({
      name: 'slot_monitor_primary_node',
      help: 'With SLOT_MONITOR_STANDBY_URLS: 1 on the node the monitor found not in recovery (the primary it watches).',
      labelNames: ['node'] as const,
      registers,
    });
    this.#standbySynced = new Gauge({
      name: 'slot_monitor_standby_slot_synced',
      help: "1 when the standby holds a synchronized, sync-ready, valid copy of the primary's failover slot; 0 otherwise (StandbySlotNotSynchronized).",
      labelNames: ['slot_name', 'standby'] as const,
      registers,
    });
    this.#standbyLag = new Gauge({
      name: 'slot_monitor_standby_slot_lag_bytes',
      help: "The primary's confirmed_flush_lsn minus the standby copy's, in bytes (StandbySlotBehind).",
      labelNames: ['slot_name', 'standby'] as const,
      registers,
    });
    this.#keepSizeTarget.set(targetKeepSizeBytes);
    this.#keepSizeMargin.set(keepSizeMarginBytes);
    this.#raiseHeld.set(0);
  }

  recordStandbySlots(primary: string, states: readonly StandbySlotState[]): void {
    for (const gauge of [this.#primaryNode, this.#standbySynced, this.#standbyLag]) gauge.reset();
    this.#primaryNode.set({ node: primary }, 1);
    for (const state of states) {
      const labels = { slot_name: state.slotName, standby: state.standby };
      this.#standbySynced.set(labels, state.synced ? 1 : 0);
      if (state.lagBytes !== null) this.#standbyLag.set(labels, state.lagBytes);
    }
  }

  recordReading(reading: DatabaseReading, history: SlotHistory, requiredSlots: readonly string[]): void {
    for (const gauge of [
      this.#walStatus,
      this.#safeWalSize,
      this.#retained,
      this.#flushLag,
      this.#active,
      this.#inactiveSeconds,
      this.#present,
    ])
      gauge.reset();
    for (const slot of reading.slots) {
      const labels = { slot_name: slot.slotName };
      for (const status of WAL_STATUSES)
        this.#walStatus.set({ ...labels, wal_status: status }, slot.walStatus === status ? 1 : 0);
      if (slot.safeWalSizeBytes !== null) this.#safeWalSize.set(labels, slot.safeWalSizeBytes);
      if (slot.retainedBytes !== null) this.#retained.set(labels, slot.retainedBytes);
      if (slot.confirmedFlushLagBytes !== null) this.#flushLag.set(labels, slot.confirmedFlushLagBytes);
      this.#active.set(labels, slot.active ? 1 : 0);
      const since = history.inactiveSince(slot.slotName);
      this.#inactiveSeconds.set(labels, since ? (reading.takenAt.getTime() - since.getTime()) / 1000 : 0);
      this.#present.set(labels, 1);
    }
    const present = new Set(reading.slots.map((slot) => slot.slotName));
    for (const name of requiredSlots) if (!present.has(name)) this.#present.set({ slot_name: name }, 0);
    this.#keepSize.set(reading.maxSlotWalKeepSizeBytes);
    if (reading.outboxInserts === null) this.#outboxInserts.reset();
    else this.#outboxInserts.set(reading.outboxInserts);
  }

  recordWalRate(positionBytes: number, peakBytesPerSecond: number | undefined, rules: WalBurstRules): void {
    this.#walPosition.set(positionBytes);
    if (peakBytesPerSecond === undefined) {
      this.#walPeakRate.reset();
      this.#walBurst.reset();
      return;
    }
    this.#walPeakRate.set(peakBytesPerSecond);
    this.#walBurst.set(burstBetweenConfirmations(peakBytesPerSecond, rules));
  }

  override recordPoll(poll: PollOutcome): void {
    super.recordPoll(poll);
    this.#pollDuration.observe(poll.seconds);
  }

  recordCorrection(): void {
    this.#corrections.inc();
  }

  recordRaiseHeld(held: boolean): void {
    this.#raiseHeld.set(held ? 1 : 0);
  }
}
