/**
 * Fault drills for the confirmation email, whose effect leaves the building: the SMTP server
 * away for 20 s under load (more failed tries than the delivery limit: counted), a "sent"
 * stamp that fails once right after a send, a provider (its own process, counting what it
 * accepts) that throttles under load, and one that is slow. Each ends
 * with one email per order (never two), every claim stamped, nothing dead-lettered, and the
 * failure series raised during the fault and gone after.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { topicFor } from '../../events/catalogue.js';
import type { OrderConfirmed } from '../../events/catalogue.js';
import { runMigrations } from '../../lib/migrations.js';
import { type Pool, createPool } from '../../lib/postgres.js';
import { sleep, waitFor } from '../../lib/wait.js';
import { confirmationEmailConsumer } from '../../consumers/confirmation-email/consumer.js';
import { createEmailSender, messageIdFor } from '../../consumers/confirmation-email/send-confirmation.js';
import { readDeadLetters } from '../../consumers/redrive/read-dead-letters.js';
import { redrive } from '../../consumers/redrive/redrive.js';
import { RuntimeEvents } from '../../consumers/runtime/lifecycle.js';
import { CONSUMER_MIGRATIONS } from '../../consumers/runtime/migrations.js';
import { deadLetterTopicFor } from '../../events/catalogue.js';
import { type CloudEventRecord, produceCloudEvents } from '../support/cloudevent-records.js';
import { installLeakGuard, track } from '../support/leak-guard.js';
import { requireStack, uniqueName } from '../support/stack.js';
import { catalogueEvent, catalogueSchemaIds } from './helpers/catalogue-events.js';
import { countInfrastructureRetries, createRoleDatabase, serveFailureSeries } from './helpers/drill.js';
import { type ReceivedMail, type SmtpSink, startSmtpSink } from './helpers/smtp-sink.js';
import { type ProviderProcess, spawnProvider } from '../../bench/provider/client.js';
import {
  connectedProducer,
  createTopics,
  startTrackedConsumer,
  testKafka,
  testLogger,
  testRegistry,
} from './helpers/stack-fixture.js';

const stack = requireStack();
installLeakGuard();

/** Ten minutes, as in production: a drill that waited for an abandoned claim would time out. */
const CLAIM_ABANDONED_AFTER_MS = 600_000;
const DELIVERY_LIMIT = 3;
/** How long the SMTP server is away: at the 2 s backoff cap, about ten tries of each held partition. */
const SMTP_DOWN_MS = 20_000;

function order(label: string): OrderConfirmed {
  return {
    order_id: randomUUID(),
    show_id: 'show-1',
    hold_id: randomUUID(),
    buyer_id: `buyer-${label}`,
    buyer_email: `${label}@example.com`,
    seat_ids: [`s-${label}`],
    total_cents: 4500,
    currency: 'EUR',
    confirmed_at: Date.now(),
  };
}

/** Where the drill's emails go: a sink in the test's process, or the provider process (slow, throttling, counting). */
type Far = { kind: 'sink' } | { kind: 'provider'; provider: ProviderProcess };

interface DrillOptions {
  far?: Far;
  sendConcurrency?: number;
  deadlineMs?: number;
  smtpTimeoutMs?: number;
}

/** A Message-ID without its angle brackets. */
function bare(messageId: string): string {
  return messageId.replace(/^<|>$/g, '');
}

async function emailDrill(prefix: string, options: DrillOptions = {}) {
  const far = options.far ?? { kind: 'sink' };
  const deadlineMs = options.deadlineMs ?? 1_800_000;
  const name = uniqueName(prefix);
  const topic = topicFor(name, 'order');
  const kafka = testKafka(stack, name);
  const registry = testRegistry(stack);
  await createTopics(kafka, [topic], 3);
  const db = await createRoleDatabase(stack.postgresAdminUrl, prefix);
  const pool: Pool = createPool({
    connectionString: db.roleUrl,
    applicationName: name,
    logger: testLogger('pool'),
    max: 5,
  });
  const closePool = track(`email drill database ${db.name}`, async () => {
    await pool.end();
    await db.drop();
  });
  await runMigrations({ pool, folder: CONSUMER_MIGRATIONS });
  const ids = await catalogueSchemaIds(registry);
  const received: ReceivedMail[] = [];
  let smtp: SmtpSink | undefined = far.kind === 'sink' ? await startSmtpSink({ received }) : undefined;
  const port = far.kind === 'provider' ? far.provider.smtpPort : (smtp?.port ?? 0);
  const transport = createEmailSender({
    smtpHost: '127.0.0.1',
    smtpPort: port,
    smtpSecure: false,
    smtpUser: '',
    smtpPassword: '',
    smtpTimeoutMs: options.smtpTimeoutMs ?? 2_000,
    mailFrom: 'tickets@stagefront.example',
    sendConcurrency: options.sendConcurrency ?? 4,
  });
  const closeTransport = track('smtp transport', () => transport.close());
  const { producer, close: closeProducer } = await connectedProducer(kafka);
  const events = new RuntimeEvents();
  const series = await serveFailureSeries(name, events, deadlineMs);
  const consumer = await startTrackedConsumer({
    definition: confirmationEmailConsumer(name, name, transport, CLAIM_ABANDONED_AFTER_MS),
    kafka,
    groupId: name,
    registry,
    pool,
    logger: testLogger(name),
    events,
    policy: {
      deadlineMs,
      lateRetryWindowMs: 5_000,
      deliveryLimit: DELIVERY_LIMIT,
      retryBaseMs: 100,
      retryCapMs: 2_000,
    },
  });
  await waitFor(() => consumer.isReady(), { timeoutMs: 60_000, description: 'the email consumer joined' });
  /** The Message-IDs the far end accepted, in order, repeats kept, without angle brackets. */
  const accepted = async (): Promise<string[]> =>
    far.kind === 'provider' ? far.provider.messageIds() : received.map((m) => bare(m.messageId));
  let sent = 0;
  return {
    db,
    topic,
    pool,
    events,
    series,
    received,
    accepted,
    /** The sender's pace now, emails per second (Infinity: not paced). */
    pace: () => transport.gate.snapshot().rate,
    /** `count` new orders; `time`: their ce_time (now when left out). */
    orders: (count: number, time?: string): CloudEventRecord[] =>
      Array.from({ length: count }, () => ({
        ...catalogueEvent(ids, 'orderConfirmed', order(`o${(sent += 1)}`)),
        ...(time === undefined ? {} : { time }),
      })),
    kafka,
    deadLetters: () => readDeadLetters(kafka, deadLetterTopicFor(topic)),
    send: (records: CloudEventRecord[]) => produceCloudEvents(producer, registry, topic, records),
    smtpDown: () => smtp?.close(),
    smtpUp: async () => {
      smtp = await startSmtpSink({ port, received });
    },
    /** One email per id, never two; every claim stamped; no dead letter. */
    expectOneEmailEach: async (eventIds: readonly string[]) => {
      await waitFor(async () => (await accepted()).length >= eventIds.length, {
        timeoutMs: 120_000,
        description: `${eventIds.length} emails`,
      });
      await waitFor(async () => (await pool.query(`select 1 from inbox where status <> 'sent'`)).rowCount === 0, {
        timeoutMs: 30_000,
        description: 'every claim stamped',
      });
      expect((await accepted()).sort()).toEqual(eventIds.map((id) => bare(messageIdFor(id))).sort());
      expect(await readDeadLetters(kafka, deadLetterTopicFor(topic))).toEqual([]);
    },
    close: async () => {
      await consumer.close();
      await Promise.all([closeProducer(), closeTransport(), smtp?.close(), series.close(), closePool()]);
    },
  };
}

/** Sends `perSecond` orders a second for `ms` (open loop: never waits for the consumer); their ids. */
async function openLoop(
  drill: Awaited<ReturnType<typeof emailDrill>>,
  perSecond: number,
  ms: number,
  during: () => Promise<void> = async () => {},
): Promise<string[]> {
  const ids: string[] = [];
  const until = Date.now() + ms;
  while (Date.now() < until) {
    ids.push(...(await drill.send(drill.orders(Math.max(1, Math.round(perSecond / 4))))));
    await during();
    await sleep(250);
  }
  return ids;
}

describe('the confirmation email when its infrastructure fails', () => {
  it(
    'the SMTP server away for 20 s under load: held and retried past the delivery limit, one email per order, nothing dead-lettered',
    { timeout: 240_000 },
    async () => {
      const drill = await emailDrill('email_smtp_down');
      const before = await drill.send(drill.orders(10));
      await waitFor(() => drill.received.length === 10, { timeoutMs: 60_000, description: 'the first ten emails' });
      const retries = countInfrastructureRetries(drill.events, drill.topic);
      await drill.smtpDown();
      const during: string[] = [];
      const downUntil = Date.now() + SMTP_DOWN_MS;
      while (Date.now() < downUntil) {
        // Open loop: a few orders every two seconds while the server is away.
        during.push(...(await drill.send(drill.orders(3))));
        await sleep(2_000);
      }
      expect(await drill.series.failingCodes()).toContain('smtp_unavailable');
      // Long enough that "nothing dead-lettered" means the limit was not counted, not that too few tries were made.
      expect(retries.stop(), 'the most infrastructure retries of one partition while away').toBeGreaterThan(
        DELIVERY_LIMIT,
      );
      await drill.smtpUp();
      await drill.expectOneEmailEach([...before, ...during]);
      await waitFor(async () => (await drill.series.failingCodes()).length === 0, {
        timeoutMs: 30_000,
        description: 'the failure series resolved',
      });
      await drill.close();
    },
  );

  it('"sent" stamps that fail after the send: stamped by a retry at once, never sent twice', async () => {
    const drill = await emailDrill('email_stamp');
    // The consumer database refuses the "sent" stamp (disk full, SQLSTATE 53100) while the flag row is there.
    await drill.db.admin(/* sql */ `
      create table refuse_stamps (on_flag boolean primary key);
      insert into refuse_stamps values (true);
      grant select on refuse_stamps to "${drill.db.role}";
      create function refuse_stamp() returns trigger language plpgsql as $$
      begin
        if new.status = 'sent' and exists (select 1 from refuse_stamps) then
          raise exception 'could not extend file: No space left on device' using errcode = '53100';
        end if;
        return new;
      end $$;
      create trigger refuse_stamp before update on inbox for each row execute function refuse_stamp();`);
    let retries = 0;
    drill.events.on('retry', () => (retries += 1));
    const ids = await drill.send(drill.orders(6));
    await waitFor(() => drill.received.length === 6 && retries >= 2, {
      timeoutMs: 60_000,
      description: 'six emails sent and their stamps failing',
    });
    expect(await drill.series.failingCodes()).toContain('53100');
    await drill.db.admin('delete from refuse_stamps');
    await drill.expectOneEmailEach(ids);
    await waitFor(async () => (await drill.series.failingCodes()).length === 0, {
      timeoutMs: 30_000,
      description: 'the failure series resolved',
    });
    await drill.close();
  });

  it(
    'the provider throttling (451 above a rate) under load: the pace lowered, one email per order, nothing doubled or dead-lettered, the throttle series raised and gone',
    { timeout: 240_000 },
    async () => {
      const provider = await spawnProvider({ acceptDelayMs: 20 });
      const stopProvider = track('smtp provider', () => provider.stop());
      const drill = await emailDrill('email_throttle', { far: { kind: 'provider', provider }, sendConcurrency: 20 });
      const before = await openLoop(drill, 40, 2_000);
      await provider.setThrottle(10);
      const codes = new Set<string>();
      let slowest = Infinity;
      const during = await openLoop(drill, 40, 8_000, async () => {
        for (const code of await drill.series.failingCodes()) codes.add(code);
        slowest = Math.min(slowest, drill.pace());
      });
      expect(slowest, 'the lowest pace while throttled (emails/s)').toBeLessThan(40);
      await provider.setThrottle(undefined);
      expect([...codes], 'the failure series while throttled').toContain('smtp_throttled');
      expect((await provider.stats()).refused['451'], 'answers the provider refused').toBeGreaterThan(0);
      await drill.expectOneEmailEach([...before, ...during]);
      expect((await provider.stats()).duplicates).toBe(0);
      await waitFor(async () => (await drill.series.failingCodes()).length === 0, {
        timeoutMs: 30_000,
        description: 'the failure series resolved',
      });
      await drill.close();
      await stopProvider();
    },
  );

  it(
    'a slow provider: the oldest waiting order ages past a quarter of its deadline (the backlog alert), then the backlog drains and the series goes; one email per order',
    { timeout: 240_000 },
    async () => {
      const provider = await spawnProvider({ acceptDelayMs: 3_000 });
      const stopProvider = track('smtp provider', () => provider.stop());
      // Slow is not failing: nothing is held or dead-lettered.
      const drill = await emailDrill('email_slow', {
        far: { kind: 'provider', provider },
        sendConcurrency: 1,
        // A minute: the alert's quarter is 15 s, and all eight orders are sent (about 24 s) well before it.
        deadlineMs: 60_000,
        // Far above the provider's 3 s: a slow answer must not count as a failure on a loaded machine.
        smtpTimeoutMs: 15_000,
      });
      const ids = await openLoop(drill, 4, 2_000);
      await waitFor(
        async () => {
          const { oldestWaitingSeconds, deadlineSeconds } = await drill.series.backlog();
          return deadlineSeconds === 60 && (oldestWaitingSeconds ?? 0) > deadlineSeconds / 4;
        },
        { timeoutMs: 30_000, description: 'the oldest waiting order past a quarter of its deadline' },
      );
      await provider.setDelay(5);
      await drill.expectOneEmailEach(ids);
      await waitFor(async () => (await drill.series.backlog()).oldestWaitingSeconds === undefined, {
        timeoutMs: 30_000,
        description: 'no order waiting',
      });
      expect((await provider.stats()).duplicates).toBe(0);
      expect(await drill.series.failingCodes()).toEqual([]);
      await drill.close();
      await stopProvider();
    },
  );

  it(
    'orders that come past their deadline (a provider down for hours) are dead-lettered as deadline exceeded, never sent; the fresh ones behind them go out; a redrive sends the old ones once',
    { timeout: 180_000 },
    async () => {
      const drill = await emailDrill('email_expired');
      const twoHoursAgo = new Date(Date.now() - 2 * 3_600_000).toISOString();
      const old = await drill.send(drill.orders(6, twoHoursAgo));
      const fresh = await drill.send(drill.orders(6));
      await waitFor(async () => (await drill.accepted()).length >= fresh.length, {
        timeoutMs: 60_000,
        description: 'the fresh orders sent',
      });
      const dead = await waitFor(
        async () => {
          const found = await drill.deadLetters();
          return found.length >= old.length && found;
        },
        { timeoutMs: 60_000, description: 'the old orders dead-lettered' },
      );
      expect(new Set(dead.map((d) => d.ceId))).toEqual(new Set(old));
      expect(new Set(dead.map((d) => d.reason))).toEqual(new Set(['deadline exceeded']));
      expect((await drill.accepted()).sort()).toEqual(fresh.map((id) => bare(messageIdFor(id))).sort());

      const redriven = await redrive({
        kafka: drill.kafka,
        pool: drill.pool,
        logger: testLogger('redrive'),
        deadLetterTopic: deadLetterTopicFor(drill.topic),
        selection: { reasons: ['deadline exceeded'] },
        ratePerSecond: 200,
        redrivenBy: 'test',
        apply: true,
      });
      expect(redriven.redriven).toHaveLength(old.length);
      await waitFor(async () => (await drill.accepted()).length >= old.length + fresh.length, {
        timeoutMs: 60_000,
        description: 'the redriven orders sent',
      });
      expect((await drill.accepted()).sort()).toEqual([...old, ...fresh].map((id) => bare(messageIdFor(id))).sort());
      expect(await drill.deadLetters()).toHaveLength(old.length);
      await drill.close();
    },
  );
});
