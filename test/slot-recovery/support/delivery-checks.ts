/** What the consumers hold, compared with what the seat database wrote. */
import { createKafka } from '../../../lib/kafka.js';
import type { Pool } from '../../../lib/postgres.js';
import { waitFor } from '../../../lib/wait.js';
import type { CollectedRecord } from '../../support/seat-pipeline.js';
import { testLogger } from '../../support/seat-pipeline.js';
import { adminQuery, endpoints } from '../../support/stack.js';

/** Outbox ids per ce_type prefix: `com.stagefront.seat.` or `com.stagefront.order.confirmed`. */
export async function outboxIds(seatAdminUrl: string, typePrefix: string): Promise<string[]> {
  const { rows } = await adminQuery(
    seatAdminUrl,
    /* sql */ `select id::text from outbox where type like $1 || '%' order by id`,
    [typePrefix],
  );
  return (rows as { id: string }[]).map((r) => r.id);
}

export async function inboxIds(consumerPool: Pool, consumer: string): Promise<string[]> {
  const { rows } = await consumerPool.query<{ event_id: string }>(
    /* sql */ `select event_id from inbox where consumer = $1 order by event_id`,
    [consumer],
  );
  return rows.map((r) => r.event_id);
}

/** Seat states in the consumer's read model vs the seat database, for every seat the read model knows. */
export async function seatStateDifferences(seatAdminUrl: string, consumerPool: Pool): Promise<string[]> {
  const { rows: truth } = await adminQuery(
    seatAdminUrl,
    /* sql */ `select seat_id, state from seats where state <> 'available'`,
  );
  const { rows: model } = await consumerPool.query<{ seat_id: string; state: string }>(
    /* sql */ `select seat_id, state from seat_availability_seats where state <> 'available'`,
  );
  const expected = new Map((truth as { seat_id: string; state: string }[]).map((r) => [r.seat_id, r.state]));
  const seen = new Map(model.map((r) => [r.seat_id, r.state]));
  return [...new Set([...expected.keys(), ...seen.keys()])]
    .filter((id) => expected.get(id) !== seen.get(id))
    .map((id) => `${id}: seat database ${expected.get(id)}, read model ${seen.get(id)}`);
}

/** Sum of the topics' high watermarks: how many records the collector must have read. */
async function recordsOnTopics(topics: string[]): Promise<number> {
  const admin = createKafka({
    brokers: endpoints().kafkaBrokers,
    clientId: 'test-offsets',
    logger: testLogger,
  }).admin();
  await admin.connect();
  try {
    let total = 0;
    for (const topic of topics)
      for (const p of await admin.fetchTopicOffsets(topic)) total += Number(p.high) - Number(p.low);
    return total;
  } finally {
    await admin.disconnect();
  }
}

/** The topics of the stack's Kafka whose name starts with `prefix`. */
export async function topicsStartingWith(prefix: string): Promise<string[]> {
  const admin = createKafka({ brokers: endpoints().kafkaBrokers, clientId: 'test-topics', logger: testLogger }).admin();
  await admin.connect();
  try {
    return (await admin.listTopics()).filter((topic) => topic.startsWith(prefix)).sort();
  } finally {
    await admin.disconnect();
  }
}

/** Waits until the collector has every record of the topics; returns the records. */
export async function allRecords(collected: CollectedRecord[], topics: string[]): Promise<CollectedRecord[]> {
  const total = await recordsOnTopics(topics);
  await waitFor(() => collected.length >= total, {
    timeoutMs: 60_000,
    description: `${total} records read back from ${topics.join(', ')}`,
  });
  return collected;
}

/** ce_ids delivered more than once (the re-emitted copies the inboxes must drop). */
export function repeatedIds(records: readonly CollectedRecord[]): Map<string, CollectedRecord[]> {
  const byId = new Map<string, CollectedRecord[]>();
  for (const record of records)
    byId.set(record.headers.ce_id ?? '', [...(byId.get(record.headers.ce_id ?? '') ?? []), record]);
  return new Map([...byId].filter(([, copies]) => copies.length > 1));
}
