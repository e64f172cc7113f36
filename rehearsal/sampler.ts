/**
 * The rehearsal's pulse, taken about once a second while the crowd runs and the pipeline drains:
 * seats by state, events published since the run began and handled per consumer, the WAL the
 * outbox slot holds back, and the alerts firing. Counts only: the exactly-once verdicts come
 * from the reconciliation at the end, never from these.
 */
import type { Pool } from '../lib/postgres.js';
import { CONSUMER_KINDS, eventTypesOf } from '../monitors/reconciliation/consumer-kinds.js';
import type { AlertWatcher } from './alerts.js';
import type { Sample } from './record.js';

export interface SamplerOptions {
  seatPool: Pool;
  consumerPool: Pool;
  showId: string;
  /** Outbox rows and inbox rows from this moment on (the seat database's clock). */
  since: Date;
  slotName: string;
  alerts: AlertWatcher;
  /** Called with every sample taken (the live view). */
  onSample: (sample: Sample) => void;
  intervalMs?: number;
}

async function seatCounts(pool: Pool, showId: string): Promise<Sample['seats']> {
  const { rows } = await pool.query<{ free: number; held: number; sold: number }>(
    /* sql */ `select count(*) filter (where state = 'available')::int as free, count(*) filter (where state = 'held')::int as held,
                      count(*) filter (where state = 'sold')::int as sold
                 from seats where show_id = $1`,
    [showId],
  );
  return rows[0] ?? { free: 0, held: 0, sold: 0 };
}

async function publishedByType(pool: Pool, since: Date): Promise<Map<string, number>> {
  const { rows } = await pool.query<{ type: string; n: number }>(
    /* sql */ `select type, count(*)::int as n from outbox where created_at >= $1 group by type`,
    [since],
  );
  return new Map(rows.map((r) => [r.type, r.n]));
}

/** Inbox rows taken since `since`: the events of this run (a drained pipeline has nothing older in flight). */
async function handledByConsumer(pool: Pool, since: Date): Promise<Map<string, number>> {
  const { rows } = await pool.query<{ consumer: string; n: number }>(
    /* sql */ `select consumer, count(*)::int as n from inbox where received_at >= $1 group by consumer`,
    [since],
  );
  return new Map(rows.map((r) => [r.consumer, r.n]));
}

async function retainedWal(pool: Pool, slotName: string): Promise<number | null> {
  try {
    const { rows } = await pool.query<{ bytes: string | null }>(
      /* sql */ `select pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn)::bigint::text as bytes from pg_replication_slots where slot_name = $1`,
      [slotName],
    );
    const bytes = rows[0]?.bytes;
    return bytes === undefined || bytes === null ? null : Number(bytes);
  } catch {
    return null;
  }
}

/** One sample now; throws when a database does not answer (the sampler skips that second). */
async function takeSample(options: Omit<SamplerOptions, 'onSample' | 'intervalMs'>): Promise<Sample> {
  const [seats, published, handled, retainedWalBytes] = await Promise.all([
    seatCounts(options.seatPool, options.showId),
    publishedByType(options.seatPool, options.since),
    handledByConsumer(options.consumerPool, options.since),
    retainedWal(options.seatPool, options.slotName),
  ]);
  const consumers = CONSUMER_KINDS.map((kind) => {
    const inScope = eventTypesOf(kind).reduce((n, type) => n + (published.get(type) ?? 0), 0);
    const done = handled.get(kind) ?? 0;
    return { consumer: kind, published: inScope, handled: done, lag: Math.max(0, inScope - done) };
  });
  return {
    at: Date.now(),
    seats,
    published: [...published.values()].reduce((a, b) => a + b, 0),
    consumers,
    retainedWalBytes,
    firing: options.alerts.firing(),
  };
}

export class Sampler {
  readonly samples: Sample[] = [];
  /** Seconds with no sample because a database did not answer (a seat-db drill). */
  missed = 0;
  readonly #options: SamplerOptions;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;

  constructor(options: SamplerOptions) {
    this.#options = options;
  }

  start(): void {
    const interval = this.#options.intervalMs ?? 1000;
    const tick = () => {
      const began = Date.now();
      this.#running = this.sampleOnce()
        .then(() => undefined)
        .finally(() => {
          if (this.#timer !== undefined) this.#timer = setTimeout(tick, Math.max(0, interval - (Date.now() - began)));
        });
    };
    this.#timer = setTimeout(tick, 0);
  }

  async sampleOnce(): Promise<Sample | undefined> {
    try {
      const sample = await takeSample(this.#options);
      this.samples.push(sample);
      this.#options.onSample(sample);
      return sample;
    } catch {
      this.missed += 1;
      return undefined;
    }
  }

  async stop(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#running;
  }

  /** Total lag over all consumers at the latest sample; undefined before the first. */
  latestLag(): number | undefined {
    return this.samples.at(-1)?.consumers.reduce((n, c) => n + c.lag, 0);
  }

  /** Highest total lag over all consumers among the samples taken from `from` until `to`. */
  peakLag(from: number, to = Infinity): number {
    return this.samples
      .filter((s) => s.at >= from && s.at < to)
      .reduce(
        (peak, s) =>
          Math.max(
            peak,
            s.consumers.reduce((n, c) => n + c.lag, 0),
          ),
        0,
      );
  }
}
