/**
 * The consumer the executor tests run: seat.held events, each written to an `effects` table with
 * no key (so an effect applied twice shows as two rows), and faults a test switches on: the
 * infrastructure failing the next N tries, a poison ce_id, a crash of the process.
 */
import { randomUUID } from 'node:crypto';
import {
  type ConsumedEvent,
  type ConsumerDefinition,
  type LatePolicy,
  type PoolClient,
  PoisonError,
  TransientError,
  catalogueEventTypes,
} from '../../../../consumers/runtime/index.js';
import type { TestEvent } from '../../../../consumers/runtime/testing/index.js';
import type { Pool } from '../../../../lib/postgres.js';

const TOPIC = 'exec.seat';

export interface Faults {
  /** Tries the infrastructure still fails (a TransientError from the handler); Infinity: always. */
  infrastructure: number;
  /** Events with these ids are poison (the handler throws PoisonError "data error"). */
  poison: Set<string>;
  /** Called inside the handler before it writes (a revocation, a crash). */
  during?: (events: readonly ConsumedEvent[]) => void;
  /** Awaited inside the handler before it writes, after `during` (an outage switched on from another session). */
  beforeWrite?: () => Promise<void>;
}

export function noFaults(): Faults {
  return { infrastructure: 0, poison: new Set() };
}

async function writeEffects(client: PoolClient, events: readonly ConsumedEvent[], faults: Faults): Promise<void> {
  faults.during?.(events);
  await faults.beforeWrite?.();
  if (faults.infrastructure > 0) {
    faults.infrastructure -= 1;
    throw new TransientError('provider_unavailable', 'the test switched the infrastructure off');
  }
  const poison = events.find((event) => faults.poison.has(event.id));
  if (poison !== undefined) throw new PoisonError('data error', `event ${poison.id} is poison for this test`);
  await client.query('INSERT INTO effects (event_id) SELECT unnest($1::text[])', [events.map((e) => e.id)]);
}

export function seatEffectsConsumer(faults: Faults, whenLate: LatePolicy = 'keep-retrying'): ConsumerDefinition {
  return {
    name: 'executor-test',
    topics: [TOPIC],
    eventTypes: catalogueEventTypes(['seatHeld'], whenLate),
    effects: { kind: 'transactional', apply: (client, events) => writeEffects(client, events, faults) },
  };
}

export async function createEffectsTable(pool: Pool): Promise<void> {
  await pool.query('CREATE TABLE effects (event_id text NOT NULL)');
}

/** How many times each event's effect was written. */
export async function effectCounts(pool: Pool): Promise<Record<string, number>> {
  const { rows } = await pool.query<{ event_id: string; n: number }>(
    'SELECT event_id, count(*)::int AS n FROM effects GROUP BY event_id',
  );
  return Object.fromEntries(rows.map((row) => [row.event_id, row.n]));
}

/** `count` seat.held events for one seat each (one partition), with fixed ids; `time` makes them old. */
export function seatHeldEvents(count: number, options: { time?: string; ids?: string[] } = {}): TestEvent[] {
  const now = Date.now();
  return Array.from({ length: count }, (_, i) => ({
    type: 'seatHeld',
    id: options.ids?.[i] ?? randomUUID(),
    ...(options.time === undefined ? {} : { time: options.time }),
    payload: {
      seat_id: `exec-A-1-${i + 1}`,
      show_id: 'exec',
      section: 'A',
      hold_id: randomUUID(),
      buyer_id: 'b1',
      held_at: now,
      expires_at: now + 600_000,
    },
  }));
}
