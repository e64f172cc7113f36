/**
 * How fast the seat database writes WAL: pg_current_wal_lsn() at every poll, the rate between
 * consecutive polls, and the peak of those rates over a window (memory only: a restarted monitor
 * starts again). From the peak, how much WAL a burst writes between two confirmations of an active
 * slot, and the alert when max_slot_wal_keep_size is smaller than that.
 */
import { RUNNING_XACTS_INTERVAL_MS } from '../../connectors/slot-confirmation.js';
import type { AlertCandidate } from './alert-tracker.js';
import { formatBytes, postgresMegabytes } from './byte-size.js';
import type { DatabaseReading } from './slot-readings.js';
import { SLOT_ALERTS } from '../alerts/slot-alerts.js';

interface RateSample {
  at: number;
  bytesPerSecond: number;
}

export class WalRate {
  readonly #windowMs: number;
  #last: { at: number; positionBytes: number } | undefined;
  #rates: RateSample[] = [];

  constructor(windowMs: number) {
    this.#windowMs = windowMs;
  }

  /** Records the WAL position read at `at`; a position that went back (a restored server) restarts the count. */
  observe(at: Date, positionBytes: number): void {
    const now = at.getTime();
    const last = this.#last;
    if (last && now > last.at && positionBytes >= last.positionBytes) {
      this.#rates.push({ at: now, bytesPerSecond: ((positionBytes - last.positionBytes) * 1000) / (now - last.at) });
    }
    this.#last = { at: now, positionBytes };
    this.#rates = this.#rates.filter((sample) => sample.at > now - this.#windowMs);
  }

  /** The highest rate between two polls within the window; undefined before two polls. */
  peakBytesPerSecond(): number | undefined {
    if (this.#rates.length === 0) return undefined;
    return Math.max(...this.#rates.map((sample) => sample.bytesPerSecond));
  }
}

export interface WalBurstRules {
  /** Kafka Connect's offset.flush.interval.ms: how often the slot's position is confirmed at most. */
  offsetFlushIntervalMs: number;
  /** The connector's heartbeat.interval.ms: how long a quiet outbox leaves nothing to confirm. */
  heartbeatIntervalMs: number;
  /** Safety factor over the peak rate. */
  walBurstMargin: number;
  walRateWindowMs: number;
}

/**
 * The WAL written at `peakBytesPerSecond` while an active slot's restart position cannot move, with
 * the margin: a confirmed position waits for the offset flush and (on a quiet outbox) a heartbeat,
 * and Postgres moves restart_lsn only to a running-transactions record, logged every 15 s.
 */
export function burstBetweenConfirmations(peakBytesPerSecond: number, rules: WalBurstRules): number {
  return (
    peakBytesPerSecond *
    ((RUNNING_XACTS_INTERVAL_MS + rules.offsetFlushIntervalMs + rules.heartbeatIntervalMs) / 1000) *
    rules.walBurstMargin
  );
}

const MB = 1024 * 1024;

/**
 * SlotCapTooSmallForWalRate while max_slot_wal_keep_size is smaller than the WAL the peak rate writes
 * between two confirmations: a burst like it makes an active, healthy slot unreserved. It holds
 * whatever the slots do now (a lost slot's connector is replaced by one that confirms just as often),
 * until the cap is raised or the peak leaves the window.
 */
export function walBurstCandidate(
  reading: DatabaseReading,
  peakBytesPerSecond: number | undefined,
  rules: WalBurstRules,
): AlertCandidate | undefined {
  const cap = reading.maxSlotWalKeepSizeBytes;
  if (cap <= 0 || peakBytesPerSecond === undefined) return undefined;
  const burst = burstBetweenConfirmations(peakBytesPerSecond, rules);
  if (burst <= cap) return undefined;
  const suggested = postgresMegabytes(Math.ceil(burst / MB) * MB);
  const window = `${Math.round(rules.walRateWindowMs / 60_000)} min`;
  const formula = `peak ${formatBytes(Math.round(peakBytesPerSecond))}/s × (${RUNNING_XACTS_INTERVAL_MS / 1000} s running-transactions interval + ${rules.offsetFlushIntervalMs / 1000} s offset flush + ${rules.heartbeatIntervalMs / 1000} s heartbeat) × ${rules.walBurstMargin}`;
  return {
    name: 'SlotCapTooSmallForWalRate',
    labels: {},
    summary: SLOT_ALERTS.SlotCapTooSmallForWalRate.summary({
      cap: formatBytes(cap),
      burst: formatBytes(Math.round(burst)),
      suggested,
    }),
    description: `Peak WAL rate over the last ${window}: ${formula} = ${formatBytes(Math.round(burst))}, against max_slot_wal_keep_size ${formatBytes(cap)}. A burst like it makes an active, healthy slot unreserved and then lost before the connector confirms its position. Raise SLOT_MONITOR_MAX_SLOT_WAL_KEEP_SIZE (max_slot_wal_keep_size) to at least ${suggested} if the disk has room, or shorten offset.flush.interval.ms / heartbeat.interval.ms (and SLOT_MONITOR_OFFSET_FLUSH_INTERVAL_MS / SLOT_MONITOR_HEARTBEAT_INTERVAL_MS with them).`,
  };
}
