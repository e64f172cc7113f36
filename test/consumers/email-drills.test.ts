/**
 * Fault drills for the confirmation email, whose effect leaves the building: the SMTP server
 * away for 20 s under load (more failed tries than the delivery limit: counted), and a "sent"
 * stamp that fails once right after a send. Each ends
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
import { createSmtpTransport, messageIdFor } from '../../consumers/confirmation-email/send-confirmation.js';
import { readDeadLetters } from '../../consumers/redrive/read-dead-letters.js';
import { RuntimeEvents } from '../../consumers/runtime/lifecycle.js';
import { CONSUMER_MIGRATIONS } from '../../consumers/runtime/migrations.js';
import { deadLetterTopicFor } from '../../events/catalogue.js';
import { type CloudEventRecord, produceCloudEvents } from '../support/cloudevent-records.js';
import { installLeakGuard, track } from '../support/leak-guard.js';
import { requireStack, uniqueName } from '../support/stack.js';
import { catalogueEvent, catalogueSchemaIds } from './helpers/catalogue-events.js';
import { countInfrastructureRetries, createRoleDatabase, serveFailureSeries } from './helpers/drill.js';
import { type ReceivedMail, type SmtpSink, startSmtpSink } from './helpers/smtp-sink.js';
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

async function emailDrill(prefix: string) {
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
  let smtp: SmtpSink = await startSmtpSink({ received });
  const port = smtp.port;
  const transport = createSmtpTransport({
    smtpHost: '127.0.0.1',
    smtpPort: port,
    smtpSecure: false,
    smtpUser: '',
    smtpPassword: '',
    smtpTimeoutMs: 2_000,
    mailFrom: 'tickets@stagefront.example',
    sendConcurrency: 4,
  });
  const closeTransport = track('smtp transport', () => transport.close());
  const { producer, close: closeProducer } = await connectedProducer(kafka);
  const events = new RuntimeEvents();
  const series = await serveFailureSeries(name, events);
  const consumer = await startTrackedConsumer({
    definition: confirmationEmailConsumer(
      name,
      name,
      transport,
      'tickets@stagefront.example',
      CLAIM_ABANDONED_AFTER_MS,
      4,
    ),
    kafka,
    groupId: name,
    registry,
    pool,
    logger: testLogger(name),
    events,
    policy: {
      deadlineMs: 1_800_000,
      lateRetryWindowMs: 5_000,
      deliveryLimit: DELIVERY_LIMIT,
      retryBaseMs: 100,
      retryCapMs: 2_000,
    },
  });
  await waitFor(() => consumer.isReady(), { timeoutMs: 60_000, description: 'the email consumer joined' });
  let sent = 0;
  return {
    db,
    topic,
    pool,
    events,
    series,
    received,
    orders: (count: number): CloudEventRecord[] =>
      Array.from({ length: count }, () => catalogueEvent(ids, 'orderConfirmed', order(`o${(sent += 1)}`))),
    send: (records: CloudEventRecord[]) => produceCloudEvents(producer, registry, topic, records),
    smtpDown: () => smtp.close(),
    smtpUp: async () => {
      smtp = await startSmtpSink({ port, received });
    },
    /** One email per id, never two; every claim stamped; no dead letter. */
    expectOneEmailEach: async (eventIds: readonly string[]) => {
      await waitFor(() => received.length >= eventIds.length, {
        timeoutMs: 120_000,
        description: `${eventIds.length} emails`,
      });
      await waitFor(async () => (await pool.query(`select 1 from inbox where status <> 'sent'`)).rowCount === 0, {
        timeoutMs: 30_000,
        description: 'every claim stamped',
      });
      expect(received.map((m) => m.messageId).sort()).toEqual(eventIds.map(messageIdFor).sort());
      expect(await readDeadLetters(kafka, deadLetterTopicFor(topic))).toEqual([]);
    },
    close: async () => {
      await consumer.close();
      await Promise.all([closeProducer(), closeTransport(), smtp.close(), series.close(), closePool()]);
    },
  };
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
});
