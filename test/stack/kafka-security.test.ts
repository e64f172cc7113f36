/**
 * Kafka with STACK_KAFKA_SECURITY=sasl_ssl, for real: a single KRaft node of its own started by the
 * launcher's component (TLS from a local CA, SCRAM-SHA-512 users of the access plan, the standard
 * authorizer refusing what no ACL allows) and a Connect worker of the stack's cluster on it as the
 * connect user. Nobody gets in without a user and its password; each program's user can do its job
 * and nothing else; Connect's storage topics are Connect's; and events still flow outbox → Kafka →
 * consumer inbox with the connector command, Connect and the consumer each as its own user.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deadLetterTopicFor, topicFor } from '../../events/catalogue.js';
import { readTopicRecords } from '../../consumers/redrive/read-dead-letters.js';
import { type Admin, createKafka, createProducer, ensureTopics, type Kafka } from '../../lib/kafka.js';
import { KAFKA_CONNECT_USER, KAFKA_CONNECTOR_COMMAND_USER, KAFKA_REDRIVE_USER } from '../../lib/kafka-access.js';
import { waitFor } from '../../lib/wait.js';
import { seatId } from '../../seat-service/inventory.js';
import { type StackLayout, stackEndpoints, stackLayout } from '../../stack/config.js';
import { STACK_CONNECT_CLUSTER, connectComponent } from '../../stack/connect.js';
import { kafkaComponent } from '../../stack/kafka.js';
import {
  aclBindings,
  kafkaTlsFiles,
  localKafkaClientEnv,
  stackKafkaClientOptions,
} from '../../stack/kafka-security.js';
import { STACK_TOPIC_PREFIX, stackKafkaAccessPlan } from '../../stack/kafka-users.js';
import { startChildProgram } from '../consumers/helpers/child-consumer.js';
import { consumerDatabase } from '../consumers/helpers/stack-fixture.js';
import { inboxIds, outboxIds } from '../slot-recovery/support/delivery-checks.js';
import { freePort } from '../slot-monitor/support/alertmanager-process.js';
import { killHard, startComponent } from '../support/kafka-cluster.js';
import { installLeakGuard, track } from '../support/leak-guard.js';
import { testLogger, useSeatPipeline } from '../support/seat-pipeline.js';
import { requireStack } from '../support/stack.js';

const stack = requireStack();
installLeakGuard();

/** The setting under test; `plaintext` here shows the refusals below are the broker's doing. */
const SECURITY = 'sasl_ssl';
const SECTION = 'S';
const SEATS = 20;
const seatTopic = topicFor(STACK_TOPIC_PREFIX, 'seat');
const orderTopic = topicFor(STACK_TOPIC_PREFIX, 'order');
const connectConfigs = `${STACK_CONNECT_CLUSTER.storageTopicPrefix}-configs`;

interface SecuredKafka {
  layout: StackLayout;
  brokers: string[];
  connectUrl: string;
  stop(): Promise<void>;
}

/** One secured node (320 MB heap) and a Connect worker (384 MB) in a home of their own, on free ports; the downloads are the stack's. */
async function startSecuredKafka(): Promise<SecuredKafka> {
  const shared = stackLayout();
  const home = mkdtempSync(join(tmpdir(), 'stagefront-kafka-security-'));
  const [kafkaPort, controllerPort, connectPort] = [await freePort(), await freePort(), await freePort()];
  const layout = stackLayout({
    ...process.env,
    STACK_HOME: home,
    STACK_DIST: shared.dist,
    STACK_KAFKA_SECURITY: SECURITY,
    STACK_KAFKA_PORT: String(kafkaPort),
    STACK_KAFKA_CONTROLLER_PORT: String(controllerPort),
    STACK_KAFKA_HEAP_MB: '320',
    STACK_CONNECT_PORT: String(connectPort),
    STACK_CONNECT_HEAP_MB: '384',
  });
  const kafka = kafkaComponent(layout);
  const connect = connectComponent(layout);
  const stop = track('secured Kafka node and Connect worker', async () => {
    await killHard(connect.pid());
    await killHard(kafka.pid());
    rmSync(home, { recursive: true, force: true });
  });
  try {
    await startComponent(kafka);
    await startComponent(connect);
  } catch (error) {
    await stop();
    throw error;
  }
  return { layout, brokers: stackEndpoints(layout).kafkaBrokers, connectUrl: `http://127.0.0.1:${connectPort}`, stop };
}

/** The error a call ends with, or undefined when it succeeds. */
async function failure(call: () => Promise<unknown>): Promise<Error | undefined> {
  try {
    await call();
    return undefined;
  } catch (error) {
    return error as Error;
  }
}

/** What authorization failures look like from kafkajs: the broker's error names or a creation aggregate of them. */
const REFUSED = /authoriz|not authorized|Topic creation errors/i;

/** kafkajs reports a refused FindCoordinator (no Describe on the group) as a coordinator it could not find. */
const GROUP_REFUSED = /authoriz|Failed to find group coordinator/i;

/**
 * How reading `topic` (which holds records) in `groupId` ends: the error subscribe or run throws, or
 * the one the consumer crashes with while it runs (a refused fetch); 'succeeded' at its first record.
 * Joining the group and being assigned partitions is not reading: that needs Describe only.
 */
async function readAttempt(kafka: Kafka, groupId: string, topic: string): Promise<string> {
  // A short fetch wait: disconnect waits for the fetch in flight (kafkajs's default wait is 5 s).
  const reader = kafka.consumer({
    groupId,
    allowAutoTopicCreation: false,
    retry: { retries: 2 },
    maxWaitTimeInMs: 100,
  });
  let outcome: string | undefined;
  reader.on(reader.events.CRASH, ({ payload }) => (outcome ??= errorText(payload.error)));
  try {
    await reader.connect();
    await reader.subscribe({ topics: [topic], fromBeginning: true });
    await reader.run({ autoCommit: false, eachMessage: async () => void (outcome ??= 'succeeded') });
  } catch (error) {
    outcome ??= errorText(error as Error);
  }
  try {
    return await waitFor(() => outcome, {
      timeoutMs: 60_000,
      intervalMs: 100,
      description: `reading ${topic} in ${groupId} to succeed or be refused`,
    });
  } finally {
    await reader.disconnect();
  }
}

function errorText(error: Error | undefined): string {
  if (error === undefined) return 'succeeded';
  const nested = (error as Error & { errors?: Error[] }).errors?.map((e) => `${e.name}: ${e.message}`) ?? [];
  return [`${error.name}: ${error.message}`, ...nested].join('; ');
}

describe("Kafka with TLS, SCRAM users and the access plan's ACLs", () => {
  let secured: SecuredKafka | undefined;
  beforeAll(async () => {
    const started = Date.now();
    secured = await startSecuredKafka();
    console.info(
      `kafka security: secured node and Connect worker healthy after ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
  }, 300_000);
  afterAll(async () => secured?.stop(), 60_000);
  const cluster = (): SecuredKafka => {
    if (secured === undefined) throw new Error('the secured Kafka of this file did not start (see its beforeAll)');
    return secured;
  };
  const clientEnv = (user: string) => ({
    KAFKA_BROKERS: cluster().brokers.join(','),
    ...localKafkaClientEnv(cluster().layout, user),
  });
  const kafkaAs = (
    user: string | undefined,
    security: Parameters<typeof createKafka>[0]['security'] = user === undefined
      ? {}
      : stackKafkaClientOptions(cluster().layout, user),
  ): Kafka =>
    createKafka({
      brokers: cluster().brokers,
      clientId: `kafka-security-${user ?? 'anonymous'}`,
      logger: testLogger,
      connectionTimeoutMs: 3000,
      retry: { retries: 5, initialRetryTime: 200, maxRetryTime: 2000 },
      security,
    });

  // The connector command as connector-command: it creates the event topics, Connect runs the outbox connector as connect.
  const pipeline = useSeatPipeline('ksec', { section: SECTION, rows: 1, seatsPerRow: SEATS, priceCents: 4000 }, () => ({
    CONNECT_URL: cluster().connectUrl,
    TOPIC_PREFIX: STACK_TOPIC_PREFIX,
    ...clientEnv(KAFKA_CONNECTOR_COMMAND_USER),
  }));

  const admins: Admin[] = [];
  const adminAs = async (user: string): Promise<Admin> => {
    const admin = kafkaAs(user).admin();
    await admin.connect();
    admins.push(admin);
    return admin;
  };
  afterAll(async () => {
    await Promise.all(admins.map((a) => a.disconnect()));
  });

  it('refuses a client without TLS, one with TLS but no user, a wrong password and an untrusted certificate', async () => {
    const ca = stackKafkaClientOptions(cluster().layout).ssl;
    const tryAdmin = (kafka: Kafka) =>
      failure(async () => {
        const admin = kafka.admin();
        try {
          await admin.connect();
          await admin.listTopics();
        } finally {
          await admin.disconnect();
        }
      });
    expect(errorText(await tryAdmin(kafkaAs(undefined))), 'plaintext, no user').not.toBe('succeeded');
    expect(errorText(await tryAdmin(kafkaAs(undefined, { ssl: ca }))), 'TLS, no user').not.toBe('succeeded');
    expect(
      errorText(
        await tryAdmin(
          kafkaAs('seat-availability', {
            ssl: ca,
            sasl: { mechanism: 'scram-sha-512', username: 'seat-availability', password: 'not-its-password' },
          }),
        ),
      ),
    ).toMatch(/SASL.*authentication failed/i);
    expect(
      errorText(
        await tryAdmin(
          kafkaAs('admin', { ssl: ca, sasl: { mechanism: 'scram-sha-512', username: 'nobody', password: 'x' } }),
        ),
      ),
    ).toMatch(/SASL.*authentication failed/i);
    // The system's CAs do not know the local CA: the broker's certificate is refused.
    const untrusted = { ...stackKafkaClientOptions(cluster().layout), ssl: {} };
    expect(errorText(await tryAdmin(kafkaAs('admin', untrusted)))).toMatch(/certificate/i);
    expect(kafkaTlsFiles(cluster().layout).caFile).toContain(cluster().layout.home);
  });

  it("lets a consumer's user read its group and write its dead letter topic, and nothing else", async () => {
    const sa = await adminAs('seat-availability');
    const dlq = deadLetterTopicFor(seatTopic);
    // Its job (the consumer program itself shows the rest: it reads the seat topic and creates its dead letter topic).
    expect(errorText(await failure(() => sa.fetchOffsets({ groupId: 'seat-availability', topics: [seatTopic] })))).toBe(
      'succeeded',
    );
    // As the consumer runtime makes it: at the brokers' default replication factor, which it reads first.
    expect(errorText(await failure(() => ensureTopics(sa, [{ topic: dlq, numPartitions: 1 }])))).toBe('succeeded');
    const kafka = kafkaAs('seat-availability');
    const producer = createProducer(kafka, { allowAutoTopicCreation: false, retry: { retries: 1 } });
    await producer.connect();
    try {
      expect(
        errorText(
          await failure(() =>
            producer.send({ topic: dlq, acks: -1, messages: [{ key: 'k', value: 'a dead letter' }] }),
          ),
        ),
      ).toBe('succeeded');
      // Not its job: forging seat events, writing Connect's configuration.
      expect(
        errorText(
          await failure(() => producer.send({ topic: seatTopic, acks: -1, messages: [{ key: 'k', value: 'forged' }] })),
        ),
      ).toMatch(REFUSED);
      expect(
        errorText(
          await failure(() =>
            producer.send({ topic: connectConfigs, acks: -1, messages: [{ key: 'connector-x', value: '{}' }] }),
          ),
        ),
      ).toMatch(REFUSED);
    } finally {
      await producer.disconnect();
    }
    // Not its job: the order topic (buyers' emails), another program's group, deleting or reconfiguring topics, new topics.
    expect(await readAttempt(kafka, 'seat-availability', orderTopic)).toMatch(REFUSED);
    expect(errorText(await failure(() => sa.fetchTopicOffsets(orderTopic)))).toMatch(REFUSED);
    expect(errorText(await failure(() => sa.fetchOffsets({ groupId: 'sales-ledger', topics: [orderTopic] })))).toMatch(
      GROUP_REFUSED,
    );
    expect(errorText(await failure(() => sa.deleteTopics({ topics: [seatTopic], timeout: 5000 })))).toMatch(REFUSED);
    expect(
      errorText(
        await failure(() =>
          sa.createTopics({
            topics: [{ topic: `${STACK_TOPIC_PREFIX}.anything`, numPartitions: 1, replicationFactor: 1 }],
          }),
        ),
      ),
    ).toMatch(REFUSED);
    expect(
      errorText(
        await failure(() =>
          sa.alterConfigs({
            validateOnly: false,
            resources: [{ type: 2, name: seatTopic, configEntries: [{ name: 'retention.ms', value: '1' }] }],
          } as never),
        ),
      ),
    ).toMatch(REFUSED);
  });

  it('lets redrive read a dead letter topic with its own throwaway group, not the event topics', async () => {
    const redrive = kafkaAs(KAFKA_REDRIVE_USER);
    const records = await readTopicRecords(redrive, deadLetterTopicFor(seatTopic), { timeoutMs: 60_000 });
    expect(records.map((r) => r.value?.toString())).toContain('a dead letter');
    expect(await readAttempt(redrive, `read-${deadLetterTopicFor(seatTopic)}-x`, seatTopic)).toMatch(REFUSED);
  }, 90_000);

  it('holds every ACL of the plan, each once, and no other', async () => {
    const admin = await adminAs('admin');
    const ANY = 1;
    const { resources } = await admin.describeAcls({
      resourceType: ANY,
      resourcePatternType: ANY,
      operation: ANY,
      permissionType: ANY,
    } as never);
    const held = resources.flatMap((r) =>
      r.acls.map((a) => ({
        resourceType: r.resourceType,
        resourceName: r.resourceName,
        resourcePatternType: r.resourcePatternType,
        ...a,
      })),
    );
    const key = (b: {
      principal: string;
      resourceType: number;
      resourceName: string;
      resourcePatternType: number;
      operation: number;
      permissionType: number;
      host: string;
    }) =>
      `${b.principal} ${b.resourceType}:${b.resourcePatternType}:${b.resourceName} ${b.operation} ${b.permissionType} ${b.host}`;
    expect(held.map(key).sort()).toEqual(aclBindings(stackKafkaAccessPlan()).map(key).sort());
  });

  it("keeps Connect's storage topics to the connect user", async () => {
    const topics = ['configs', 'offsets', 'status'].map(
      (kind) => `${STACK_CONNECT_CLUSTER.storageTopicPrefix}-${kind}`,
    );
    expect((await (await adminAs('admin')).listTopics()).filter((t) => topics.includes(t)).sort()).toEqual(
      [...topics].sort(),
    );
    const connect = await adminAs(KAFKA_CONNECT_USER);
    expect(errorText(await failure(() => connect.fetchTopicOffsets(connectConfigs)))).toBe('succeeded');
    for (const user of ['seat-availability', KAFKA_REDRIVE_USER, KAFKA_CONNECTOR_COMMAND_USER]) {
      const other = await adminAs(user);
      expect(
        errorText(await failure(() => other.fetchTopicOffsets(connectConfigs))),
        `${user} on ${connectConfigs}`,
      ).toMatch(REFUSED);
      expect(await other.listTopics(), `${user} does not even see Connect's topics`).not.toContain(connectConfigs);
    }
  });

  it('carries events outbox → Kafka → inbox over SASL_SSL, the consumer as its own user', async () => {
    const inbox = await consumerDatabase('ksec_inbox');
    const consumer = startChildProgram('consumers/seat-availability/main.ts', {
      CONSUMER_DATABASE_URL: inbox.url,
      SCHEMA_REGISTRY_URL: stack.registryUrl,
      TOPIC_PREFIX: STACK_TOPIC_PREFIX,
      CONSUMER_GROUP_ID: 'seat-availability',
      METRICS_PORT: '0',
      LOG_LEVEL: 'warn',
      ...clientEnv('seat-availability'),
    });
    try {
      for (let i = 1; i <= SEATS; i += 1) {
        const result = await pipeline().service.hold({
          showId: 'ksec',
          seatIds: [seatId('ksec', SECTION, 1, i)],
          buyerId: `ksec-${i}`,
        });
        expect(result.status).toBe('held');
      }
      const ids = await outboxIds(pipeline().adminUrl, 'com.stagefront.seat.');
      expect(ids).toHaveLength(SEATS);
      await waitFor(async () => (await inboxIds(inbox.pool, 'seat-availability')).length >= SEATS, {
        timeoutMs: 120_000,
        intervalMs: 500,
        description: `${SEATS} seat events in the seat-availability inbox`,
      });
      expect(await inboxIds(inbox.pool, 'seat-availability')).toEqual([...ids].sort());
      expect(consumer.process.exitCode, consumer.output()).toBeNull();
    } finally {
      await consumer.close();
      await inbox.close();
    }
  }, 180_000);
});
