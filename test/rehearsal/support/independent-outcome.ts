/**
 * A rehearsal's outcome counted again from sources other than the rehearsal: the seat database's
 * outbox and tables, Kafka read by a client of the test's own (from the topics' ends before the
 * run to their ends after it), and each consumer's inbox and effect tables. None of it reads the
 * record the rehearsal wrote, nor its checks' code: the tests compare the two.
 */
import { connectorSettings } from '../../../connectors/settings.js';
import { EVENTS } from '../../../events/catalogue.js';
import { parseSettings } from '../../../lib/settings.js';
import { seatServiceSettings } from '../../../seat-service/settings.js';
import { localStackProgramEnv, stackEndpoints, type StackLayout } from '../../../stack/config.js';
import { createKafka, type Kafka } from '../../../lib/kafka.js';
import { waitFor } from '../../../lib/wait.js';
import { CONSUMER_KINDS, eventTypesOf } from '../../../monitors/reconciliation/consumer-kinds.js';
import { testLogger } from '../../support/seat-pipeline.js';
import { adminQuery } from '../../support/stack.js';

export interface RunSources {
  seatAdminUrl: string;
  consumerAdminUrl: string;
  brokers: string[];
  /** The event topics: <prefix>.seat and <prefix>.order. */
  topics: string[];
}

/** The sources of a native stack (its layout's program settings): the seat and consumer databases, its Kafka, the default topics. */
export function stackSources(layout: StackLayout): RunSources {
  const env = localStackProgramEnv(layout);
  const seatAdminUrl = parseSettings(seatServiceSettings, { ...process.env, ...env }).adminDatabaseUrl;
  const prefix = connectorSettings.settings.topicPrefix.default;
  return {
    seatAdminUrl,
    consumerAdminUrl: seatAdminUrl.replace(/\/[^/]+$/, '/stagefront_consumers'),
    brokers: stackEndpoints(layout).kafkaBrokers,
    topics: [`${prefix}.seat`, `${prefix}.order`],
  };
}

/** Per topic and partition: the next offset (the end). */
export type TopicEnds = Map<string, Map<number, bigint>>;

function kafkaOf(sources: RunSources): Kafka {
  return createKafka({ brokers: sources.brokers, clientId: 'test-independent-outcome', logger: testLogger });
}

/** The topics' ends now: taken before a run, the point from which its records are read. */
export async function topicEnds(sources: RunSources): Promise<TopicEnds> {
  const admin = kafkaOf(sources).admin();
  await admin.connect();
  try {
    const ends: TopicEnds = new Map();
    for (const topic of sources.topics) {
      const partitions = (await admin.listTopics()).includes(topic) ? await admin.fetchTopicOffsets(topic) : [];
      ends.set(topic, new Map(partitions.map((p) => [p.partition, BigInt(p.high)])));
    }
    return ends;
  } finally {
    await admin.disconnect();
  }
}

interface TopicRecord {
  ceId: string;
  type: string;
  key: string;
}

/** Every record on the topics from `from` (a partition missing there: from its start) to their ends now. */
async function recordsSince(sources: RunSources, from: TopicEnds): Promise<TopicRecord[]> {
  const kafka = kafkaOf(sources);
  const to = await topicEnds(sources);
  const records: TopicRecord[] = [];
  const next = new Map<string, bigint>();
  const consumer = kafka.consumer({ groupId: `test-outcome-${process.pid}-${Date.now()}`, maxWaitTimeInMs: 100 });
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: sources.topics, fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ topic, partition, message }) => {
        const offset = BigInt(message.offset);
        const start = from.get(topic)?.get(partition) ?? 0n;
        const where = `${topic}/${partition}`;
        if (offset < start || offset < (next.get(where) ?? 0n)) return;
        next.set(where, offset + 1n);
        const header = (name: string) => message.headers?.[name]?.toString() ?? '';
        records.push({ ceId: header('ce_id'), type: header('ce_type'), key: message.key?.toString() ?? '' });
      },
    });
    for (const [topic, partitions] of from)
      for (const [partition, offset] of partitions) consumer.seek({ topic, partition, offset: offset.toString() });
    await waitFor(
      () =>
        [...to].every(([topic, partitions]) =>
          [...partitions].every(
            ([partition, end]) =>
              end <= (from.get(topic)?.get(partition) ?? 0n) || (next.get(`${topic}/${partition}`) ?? 0n) >= end,
          ),
        ),
      {
        timeoutMs: 120_000,
        intervalMs: 250,
        description: `the run's records read back from ${sources.topics.join(', ')}`,
      },
    );
  } finally {
    await consumer.disconnect();
  }
  return records;
}

interface OutboxRow {
  id: string;
  type: string;
  aggregateid: string;
  created_ms: number;
}

export interface IndependentOutcome {
  /** The show's outbox rows (seat events by seat id, order events by the show's orders). */
  outbox: OutboxRow[];
  orders: number;
  soldSeats: number;
  /** Each thing found wrong, in words; empty when the run was consistent. */
  problems: string[];
  /** Outbox ids of the show that some consumer has not handled (applied, or for email sent), with their creation time. */
  unhandled: { consumer: string; id: string; createdMs: number }[];
  /** Each event of the show the seat availability consumer received: when, and how long after its commit. */
  availabilityArrivals: { receivedMs: number; tookMs: number }[];
}

/** The show's outcome from the seat database, Kafka (records from `from` on) and the consumer database. */
export async function independentOutcome(
  show: string,
  sources: RunSources,
  from: TopicEnds,
): Promise<IndependentOutcome> {
  const seat = (sql: string, params: unknown[] = []) => adminQuery(sources.seatAdminUrl, sql, params);
  const consumers = (sql: string, params: unknown[] = []) => adminQuery(sources.consumerAdminUrl, sql, params);
  const { rows: outbox } = (await seat(
    /* sql */ `
    select id::text, type, aggregateid, (extract(epoch from created_at) * 1000)::float8 as created_ms from outbox
     where aggregateid like $1 || ':%' or aggregateid in (select order_id::text from orders where show_id = $1)
     order by created_at, id`,
    [show],
  )) as { rows: OutboxRow[] };
  const problems: string[] = [];

  // Kafka: every outbox row of the show was published; no seat has two seat.sold events, no order two order.confirmed.
  const onKafka = (await recordsSince(sources, from)).filter((r) => r.ceId !== '');
  const published = new Set(onKafka.map((r) => r.ceId));
  const notPublished = outbox.filter((row) => !published.has(row.id));
  if (notPublished.length > 0)
    problems.push(
      `${notPublished.length} outbox rows of the show not on Kafka (${notPublished
        .slice(0, 3)
        .map((r) => r.id)
        .join(', ')})`,
    );
  const ofShow = new Set(outbox.map((row) => row.id));
  const distinctPer = (type: string) => {
    const per = new Map<string, Set<string>>();
    for (const r of onKafka.filter((x) => x.type === type && ofShow.has(x.ceId)))
      per.set(r.key, (per.get(r.key) ?? new Set()).add(r.ceId));
    return per;
  };
  const soldOnKafka = distinctPer(EVENTS.seatSold.type);
  const soldTwice = [...soldOnKafka].filter(([, ids]) => ids.size > 1).map(([key]) => key);
  if (soldTwice.length > 0) problems.push(`seats with two seat.sold events on Kafka: ${soldTwice.join(', ')}`);
  const confirmedTwice = [...distinctPer(EVENTS.orderConfirmed.type)].filter(([, ids]) => ids.size > 1);
  if (confirmedTwice.length > 0)
    problems.push(`orders with two order.confirmed events on Kafka: ${confirmedTwice.length}`);

  // The seat tables agree with the events: every sold seat of the show has its seat.sold on Kafka, and only those.
  const { rows: sold } = (await seat(`select seat_id from seats where show_id = $1 and state = 'sold'`, [show])) as {
    rows: { seat_id: string }[];
  };
  const soldIds = new Set(sold.map((s) => s.seat_id));
  const soldWithoutEvent = sold.filter((s) => !soldOnKafka.has(s.seat_id)).length;
  const eventWithoutSale = [...soldOnKafka.keys()].filter((id) => !soldIds.has(id)).length;
  if (soldWithoutEvent + eventWithoutSale > 0)
    problems.push(
      `${soldWithoutEvent} sold seats without a seat.sold on Kafka, ${eventWithoutSale} seat.sold events of seats not sold`,
    );

  // Each consumer's inbox holds every event of its types, done (the email consumer's: sent).
  const unhandled: IndependentOutcome['unhandled'] = [];
  for (const consumer of CONSUMER_KINDS) {
    const types = new Set(eventTypesOf(consumer));
    const expected = outbox.filter((row) => types.has(row.type));
    const { rows: done } = (await consumers(
      `select event_id from inbox where consumer = $1 and event_id = any($2::text[]) and status = any($3::text[])`,
      [consumer, expected.map((r) => r.id), consumer === 'confirmation-email' ? ['sent'] : ['applied', 'sent']],
    )) as { rows: { event_id: string }[] };
    const handled = new Set(done.map((r) => r.event_id));
    for (const row of expected)
      if (!handled.has(row.id)) unhandled.push({ consumer, id: row.id, createdMs: row.created_ms });
  }
  for (const consumer of CONSUMER_KINDS) {
    const missing = unhandled.filter((u) => u.consumer === consumer);
    if (missing.length > 0)
      problems.push(`${consumer}: ${missing.length} events of the show not handled (${missing[0]!.id}, …)`);
  }

  // The effects: the availability read model per section, the ledger's totals for the show.
  const { rows: truth } = (await seat(
    /* sql */ `select section, count(*) filter (where state = 'held')::int as held, count(*) filter (where state = 'sold')::int as sold
      from seats where show_id = $1 group by section order by section`,
    [show],
  )) as { rows: { section: string; held: number; sold: number }[] };
  const { rows: model } = (await consumers(
    `select section, held, sold from seat_availability_sections where show_id = $1 order by section`,
    [show],
  )) as { rows: { section: string; held: number; sold: number }[] };
  const shown = (rows: { section: string; held: number; sold: number }[]) =>
    rows
      .filter((r) => r.held + r.sold > 0)
      .map((r) => `${r.section} ${r.sold}/${r.held}`)
      .join(', ');
  if (shown(truth) !== shown(model)) problems.push(`read model ${shown(model)} but seats ${shown(truth)} (sold/held)`);
  const { rows: orders } = (await seat(
    /* sql */ `select count(distinct o.order_id)::int as orders, count(os.seat_id)::int as seats, coalesce(sum(os.price_cents), 0)::int as total_cents
      from orders o left join order_seats os using (order_id) where o.show_id = $1`,
    [show],
  )) as { rows: { orders: number; seats: number; total_cents: number }[] };
  const { rows: ledger } = (await consumers(
    `select coalesce(sum(orders), 0)::int as orders, coalesce(sum(seats), 0)::int as seats, coalesce(sum(total_cents), 0)::int as total_cents from sales_ledger_totals where show_id = $1`,
    [show],
  )) as { rows: { orders: number; seats: number; total_cents: number }[] };
  if (JSON.stringify(ledger[0]) !== JSON.stringify(orders[0]))
    problems.push(`ledger ${JSON.stringify(ledger[0])} but seat database ${JSON.stringify(orders[0])}`);

  const createdMs = new Map(outbox.map((row) => [row.id, row.created_ms]));
  const { rows: arrivals } = (await consumers(
    /* sql */ `select event_id, (extract(epoch from received_at) * 1000)::float8 as received_ms from inbox
      where consumer = 'seat-availability' and event_id = any($1::text[])`,
    [outbox.map((row) => row.id)],
  )) as { rows: { event_id: string; received_ms: number }[] };
  const availabilityArrivals = arrivals.map((a) => ({
    receivedMs: a.received_ms,
    tookMs: a.received_ms - (createdMs.get(a.event_id) ?? a.received_ms),
  }));

  return { outbox, orders: orders[0]?.orders ?? 0, soldSeats: sold.length, problems, unhandled, availabilityArrivals };
}

/**
 * A drill's time to fresh recounted from the databases: when the last event of the show that took
 * 1 s or more from commit reached seat availability, from the kill until `to`; the kill itself when
 * none did; null when none reached it in that window.
 */
export function freshAtRecounted(outcome: IndependentOutcome, killedAt: number, to: number): number | null {
  const inWindow = outcome.availabilityArrivals.filter((a) => a.receivedMs >= killedAt && a.receivedMs < to);
  if (inWindow.length === 0) return null;
  return Math.max(killedAt, ...inWindow.filter((a) => a.tookMs >= 1_000).map((a) => a.receivedMs));
}

/**
 * A drill's verdict recounted: the events of the show written from its kill until `to` that some
 * consumer did not handle, and the run's problems (doubles are the whole run's). Empty: it held.
 */
export function drillProblems(outcome: IndependentOutcome, killedAt: number, to: number): string[] {
  const lost = outcome.unhandled.filter((u) => u.createdMs >= killedAt && u.createdMs < to);
  return [
    ...(lost.length > 0 ? [`${lost.length} events written during the drill not handled`] : []),
    ...outcome.problems,
  ];
}
