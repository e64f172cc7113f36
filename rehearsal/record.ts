/**
 * What a rehearsal leaves behind, as data: the run writes it (rehearsal-record.json beside the text
 * report), the live view shows its samples as they come, and the HTML report draws its charts from
 * it. Times are epoch milliseconds.
 */
import type { Check } from './consistency.js';

/** Taken about once a second while the crowd runs and the pipeline drains. */
export interface Sample {
  at: number;
  seats: { free: number; held: number; sold: number };
  /** Outbox rows published since the run began, all types. */
  published: number;
  /** Per consumer: events in its scope published so far, handled so far, and the difference. */
  consumers: { consumer: string; published: number; handled: number; lag: number }[];
  /** WAL the outbox slot holds back, in bytes; null when the slot is missing or unreadable. */
  retainedWalBytes: number | null;
  /** Alert names firing at Alertmanager at this moment (Watchdog left out). */
  firing: string[];
}

/** Commit → effect latency of the events one consumer handled in one second. */
export interface LatencyPoint {
  at: number;
  p50: number;
  p99: number;
  count: number;
}

/** One stage of the path from commit to effect, for one consumer. */
export interface StageLatency {
  consumer: string;
  stage: string;
  p50: number;
  p99: number;
  max: number;
  count: number;
}

export interface DrillRecord {
  /** connect, kafka, registry, consumer, seat-db, sweeper. */
  target: string;
  /** The process killed: a stack component (`kafka`, `connect`) or a program of the rehearsal (`seat-availability`). Absent in records written before it was kept. */
  victim?: string;
  killedAt: number;
  /** When it was started again; null if it never came back. */
  restartedAt: number | null;
  /** When it answered as healthy again. */
  backAt: number | null;
  /**
   * When the consumers had caught up after it (total lag back to at most twice its value at the
   * kill, and at most 50 events); null if not within 2 minutes of backAt. The next drill strikes after it.
   */
  caughtUpAt?: number | null;
  /**
   * On a stack with survivors (two Connect workers, three Kafka nodes, two instances of a
   * consumer): the instance that took the victim's work over (ran its task, led its partition,
   * owned its partition), read from the cluster, and when; null if none did within a minute.
   * Absent where there was nobody to take over.
   */
  takenOverBy?: string | null;
  takenOverAt?: number | null;
  /**
   * When the availability pages were fresh again, for good until the next drill's kill (the end of
   * the run for the last): the last seat availability event in that window that took 1 s or more
   * from commit reached it then, or the kill itself when none did (rehearsal/freshness.ts); null
   * when no event reached it in that window. Absent in records written before it was kept.
   */
  freshAt?: number | null;
  /**
   * How long after the kill it may leave the pages stale: its target's budget plus the time it was
   * left down (rehearsal/objectives.ts); a later freshAt fails its verdict. Absent in records written before it was kept.
   */
  freshBudgetMs?: number;
  /**
   * True when its window closed (the next drill's kill, the end of the run) on an event that took
   * 1 s or more: never fresh again within it, whatever freshAt says; fails its verdict. Absent: false.
   */
  staleAtEnd?: boolean;
  /** Highest lag (events, over all consumers) between the kill and the next drill's kill (the end of the run for the last). */
  peakLag: number;
  /** Alerts that began firing between the kill and 2 minutes after it came back (or the next drill's kill, if sooner). */
  alerts: string[];
  /** The alerts it was away long enough to promise (rehearsal/drill-alerts.ts); absent: none. */
  promisedAlerts?: string[];
  /** Nothing lost, doubled or oversold across the drill (the run's checks, scoped to it), its promised alerts raised and resolved, and fresh again within its budget. */
  verdict: { ok: boolean; detail: string };
  /** What else it took to get back (e.g. a connector task restarted), or why it did not come back. */
  notes?: string[];
}

export interface AlertRecord {
  name: string;
  severity: string;
  startsAt: number;
  endsAt: number | null;
  /** Firing already when the run began. */
  beganBeforeRun: boolean;
}

export interface RehearsalRecord {
  showId: string;
  startedAt: number;
  finishedAt: number;
  machine: string;
  settings: { buyers: number; concurrency: number; sections: string; drills: string[] };
  /**
   * errors: failed calls and unexpected answers buyers saw outside drills; errorsDuringDrills: those
   * seen between a drill's kill and 10 s after its part was back (each call was retried).
   */
  crowd: {
    buyers: number;
    confirmed: number;
    abandoned: number;
    released: number;
    seatTaken: number;
    gaveUp: number;
    errors: number;
    errorsDuringDrills: number;
    seconds: number;
  };
  samples: Sample[];
  latency: { consumer: string; points: LatencyPoint[] }[];
  stages: StageLatency[];
  drills: DrillRecord[];
  alerts: AlertRecord[];
  checks: Check[];
}

/**
 * The run's verdict in one line, as the text and HTML reports head their checks: ok only when
 * checks were recorded, every one passed and every drill held.
 */
export function recordVerdict(record: RehearsalRecord): { ok: boolean; headline: string } {
  const failed = record.checks.filter((c) => !c.ok);
  const drillsFailed = record.drills.filter((d) => !d.verdict.ok);
  const checksPart =
    record.checks.length === 0
      ? 'No checks were recorded'
      : failed.length === 0
        ? `All ${record.checks.length} checks passed`
        : `${failed.length} of ${record.checks.length} checks failed`;
  const drillsPart =
    record.drills.length === 0
      ? []
      : [
          drillsFailed.length === 0
            ? `${record.drills.length} drills held`
            : `${drillsFailed.length} of ${record.drills.length} drills did not hold`,
        ];
  return {
    ok: failed.length === 0 && drillsFailed.length === 0 && record.checks.length > 0,
    headline: [checksPart, ...drillsPart].join(', '),
  };
}
