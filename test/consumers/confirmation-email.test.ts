import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { topicFor } from '../../events/catalogue.js';
import type { OrderConfirmed } from '../../events/catalogue.js';
import { waitFor } from '../../lib/wait.js';
import { confirmationEmailConsumer } from '../../consumers/confirmation-email/consumer.js';
import { createEmailSender, messageIdFor } from '../../consumers/confirmation-email/send-confirmation.js';
import { RuntimeEvents } from '../../consumers/runtime/lifecycle.js';
import { produceCloudEvents } from '../support/cloudevent-records.js';
import { installLeakGuard, track } from '../support/leak-guard.js';
import { requireStack, uniqueName } from '../support/stack.js';
import { catalogueEvent, catalogueSchemaIds } from './helpers/catalogue-events.js';
import { startSmtpSink } from './helpers/smtp-sink.js';
import {
  FAST_POLICY,
  connectedProducer,
  consumerDatabase,
  createTopics,
  startTrackedConsumer,
  testKafka,
  testLogger,
  testRegistry,
} from './helpers/stack-fixture.js';

const stack = requireStack();
installLeakGuard();

function order(label: string): OrderConfirmed {
  return {
    order_id: randomUUID(),
    show_id: 'show-1',
    hold_id: randomUUID(),
    buyer_id: `buyer-${label}`,
    buyer_email: `${label}@example.com`,
    seat_ids: [`s-${label}-1`, `s-${label}-2`],
    total_cents: 9000,
    currency: 'EUR',
    confirmed_at: Date.now(),
  };
}

describe('order confirmation email', () => {
  it('sends one email per order: republished, redelivered, refused once (451), or claimed by a delivery that died', async () => {
    const name = uniqueName('email');
    const topic = topicFor(name, 'order');
    const kafka = testKafka(stack, name);
    const registry = testRegistry(stack);
    await createTopics(kafka, [topic], 2);
    const db = await consumerDatabase('email');
    const ids = await catalogueSchemaIds(registry);
    const smtp = await startSmtpSink();
    const transport = createEmailSender({
      smtpHost: '127.0.0.1',
      smtpPort: smtp.port,
      smtpSecure: false,
      smtpUser: '',
      smtpPassword: '',
      smtpTimeoutMs: 5_000,
      mailFrom: 'tickets@stagefront.example',
      sendConcurrency: 4,
    });
    const closeTransport = track('smtp transport', () => transport.close());
    const { producer, close: closeProducer } = await connectedProducer(kafka);

    const [a, b, freshClaim, staleClaim, refused] = ['a', 'b', 'fresh', 'stale', 'refused'].map((label) =>
      catalogueEvent(ids, 'orderConfirmed', order(label), randomUUID()),
    );
    // Two deliveries that died between claim and stamp: one just now, one an hour ago.
    const claim = `insert into inbox (consumer, event_id, event_type, source_topic, source_partition, source_offset, status, claims, claimed_at)
                   values ($1, $2, 'com.stagefront.order.confirmed', $3, 0, 0, 'claimed', 1, now() - $4::interval)`;
    await db.pool.query(claim, [name, freshClaim!.id, topic, '0 seconds']);
    await db.pool.query(claim, [name, staleClaim!.id, topic, '1 hour']);
    smtp.refuseOnce('refused@example.com');

    const events = new RuntimeEvents();
    let duplicates = 0;
    events.on('duplicate', ({ count }) => (duplicates += count));
    const options = {
      definition: confirmationEmailConsumer(name, name, transport, 3_000),
      kafka,
      groupId: name,
      registry,
      pool: db.pool,
      logger: testLogger(name),
      policy: { ...FAST_POLICY, retryCapMs: 1_000 },
      events,
    };
    await produceCloudEvents(producer, registry, topic, [a!, b!, a!, freshClaim!, staleClaim!, refused!]);
    const first = await startTrackedConsumer(options);
    await waitFor(() => smtp.received.length >= 5, { timeoutMs: 60_000, description: 'five emails' });
    await waitFor(async () => (await db.pool.query(`select 1 from inbox where status <> 'sent'`)).rowCount === 0, {
      timeoutMs: 10_000,
      description: 'every claim stamped sent',
    });
    await first.close();

    const admin = kafka.admin();
    await admin.connect();
    await admin.resetOffsets({ groupId: name, topic, earliest: true });
    await admin.disconnect();
    const seenBefore = duplicates;
    const second = await startTrackedConsumer(options);
    await waitFor(() => duplicates - seenBefore === 6, {
      timeoutMs: 30_000,
      description: 'all six records redelivered and skipped',
    });
    await second.close();

    const expected = [a, b, freshClaim, staleClaim, refused].map((e) => messageIdFor(e!.id!));
    expect(smtp.received.map((m) => m.messageId).sort()).toEqual(expected.sort());
    expect(smtp.received.find((m) => m.messageId === messageIdFor(a!.id!))?.to).toEqual(['a@example.com']);
    const claims = await db.pool.query<{ event_id: string; claims: number }>(
      'select event_id, claims from inbox where consumer = $1',
      [name],
    );
    expect(claims.rows.find((r) => r.event_id === freshClaim!.id)?.claims).toBe(2);
    await Promise.all([db.close(), closeProducer(), closeTransport(), smtp.close()]);
  });
});
