/**
 * Issue 9, item 6: the Debezium password reaches the connector through Connect's env config
 * provider, never in plain text in Connect's stored configuration; and the worker lets a connector
 * override only the client setting the outbox connector uses. On a Connect worker of its own (its
 * environment holds a password made up for this test, of a role made up for this test), so the
 * test can search every stored byte for that password without disturbing the stack's worker.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateConnectorConfig } from '../../connectors/connect-client.js';
import { liveConnectorConfig } from '../../connectors/connector-lifecycle.js';
import { renderOutboxConnector } from '../../connectors/outbox-connector.js';
import { OFFSET_FLUSH_INTERVAL_MS } from '../../connectors/slot-confirmation.js';
import { EVENTS } from '../../events/catalogue.js';
import { createKafka } from '../../lib/kafka.js';
import { waitFor } from '../../lib/wait.js';
import { seatId } from '../../seat-service/inventory.js';
import {
  LOCAL_CONNECT_ENV,
  LOCAL_CONNECT_USER,
  localConnectApi,
  projectRoot,
  stackLayout,
} from '../../stack/config.js';
import {
  WORKER_SECURITY_PROPERTIES,
  connectComponent,
  restAuthFiles,
  restJaasConfig,
  restUsersFile,
  workerProperties,
} from '../../stack/connect.js';
import { runChildProgram } from '../consumers/helpers/child-consumer.js';
import { startConnectWorker, type ConnectWorker } from '../support/connect-worker.js';
import { installLeakGuard } from '../support/leak-guard.js';
import { collectRecords, testLogger, useSeatPipeline } from '../support/seat-pipeline.js';
import { adminQuery, requireStack, uniqueName } from '../support/stack.js';

const stack = requireStack();
installLeakGuard();

const role = uniqueName('debezium').toLowerCase();
const password = `pw-${randomBytes(12).toString('hex')}`;

/** Every value ever written to a Connect storage topic, as text. */
async function topicValues(topic: string): Promise<string[]> {
  const kafka = createKafka({ brokers: stack.kafkaBrokers, clientId: 'test-config-topic', logger: testLogger });
  const admin = kafka.admin();
  await admin.connect();
  const ends = await admin.fetchTopicOffsets(topic).finally(() => admin.disconnect());
  const total = ends.reduce((sum, p) => sum + Number(p.high), 0);
  const consumer = kafka.consumer({ groupId: uniqueName('config-reader'), maxWaitTimeInMs: 100 });
  const values: string[] = [];
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await consumer.run({ eachMessage: async ({ message }) => void values.push(message.value?.toString('utf8') ?? '') });
    await waitFor(() => values.length >= total, { timeoutMs: 30_000, description: `all ${total} records of ${topic}` });
  } finally {
    await consumer.disconnect();
  }
  return values;
}

describe('the connector gets its password from the worker, never from its stored configuration', () => {
  let worker: ConnectWorker;
  beforeAll(async () => {
    // A role of this test's own, so its password is nothing the rest of the suite knows; it has
    // the Debezium role's grants (that role is the seat migrations', made here if none ran yet).
    await adminQuery(
      stack.postgresAdminUrl,
      /* sql */ `do $$ begin
      if not exists (select 1 from pg_roles where rolname = 'stagefront_debezium') then create role stagefront_debezium nologin replication; end if;
    end $$`,
    );
    await adminQuery(
      stack.postgresAdminUrl,
      `create role ${pg.escapeIdentifier(role)} login replication password ${pg.escapeLiteral(password)} in role stagefront_debezium`,
    );
    worker = await startConnectWorker('secrets', 384, { DEBEZIUM_DB_PASSWORD: password });
  });
  // Registered before the pipeline's, so it runs after the pipeline's teardown (after hooks run in reverse).
  afterAll(async () => {
    await worker?.stop();
    await adminQuery(stack.postgresAdminUrl, `drop role if exists ${pg.escapeIdentifier(role)}`);
  });
  const pipeline = useSeatPipeline('secrets', { section: 'A', rows: 1, seatsPerRow: 4, priceCents: 3000 }, () => ({
    CONNECT_URL: worker.url,
    ...LOCAL_CONNECT_ENV,
    DEBEZIUM_DB_USER: role,
  }));

  it('GET /config and the config topic hold the ${env:…} reference only, and the connector streams', async () => {
    const live = await liveConnectorConfig(localConnectApi(worker.url), pipeline().connector.connectorName);
    expect(live['database.password']).toBe('${env:DEBEZIUM_DB_PASSWORD}');
    expect(live['database.user']).toBe(role);
    expect(JSON.stringify(live)).not.toContain(password);

    const stored = await topicValues(worker.configTopic);
    expect(stored.some((value) => value.includes('${env:DEBEZIUM_DB_PASSWORD}'))).toBe(true);
    expect(stored.filter((value) => value.includes(password))).toEqual([]);

    const collector = await collectRecords([pipeline().topics.seat]);
    try {
      const held = await pipeline().service.hold({
        showId: 'secrets',
        seatIds: [seatId('secrets', 'A', 1, 1)],
        buyerId: 'buyer-1',
      });
      expect(held.status).toBe('held');
      await waitFor(() => collector.records.some((r) => r.headers.ce_type === EVENTS.seatHeld.type), {
        timeoutMs: 30_000,
        description: 'the hold on the seat topic',
      });
    } finally {
      await collector.stop();
    }
  });

  it('the connector command renders and reports no password, and its status is healthy', async () => {
    const env = {
      CONNECT_URL: worker.url,
      ...LOCAL_CONNECT_ENV,
      CONNECTOR_NAME: pipeline().connector.connectorName,
      SLOT_NAME: pipeline().connector.slotName,
      CONNECTOR_SEAT_DB_URL: pipeline().adminUrl,
      LOG_LEVEL: 'warn',
    };
    const render = await runChildProgram('connectors/cli.ts', env, ['render']);
    expect(render.code, render.output).toBe(0);
    expect(JSON.parse(render.output)['database.password']).toBe('${env:DEBEZIUM_DB_PASSWORD}');
    const status = await runChildProgram('connectors/cli.ts', env, ['status']);
    expect(status.code, status.output).toBe(0);
    expect(status.output).not.toContain(password);
    expect(status.output).toContain('active');
  });

  it('a connector may override the producer settings the outbox connector overrides and nothing else', async () => {
    const rendered = { name: uniqueName('policy'), ...renderOutboxConnector(pipeline().connector) };
    expect(await validateConnectorConfig(localConnectApi(worker.url), rendered)).toEqual([]);
    const problems = await validateConnectorConfig(localConnectApi(worker.url), {
      ...rendered,
      'producer.override.acks': '0',
    });
    expect(problems.join('\n')).toMatch(/producer\.override\.acks|acks/);
  });
});

describe('docker-compose.yml configures its Connect worker like the native stack', () => {
  it('has the same config provider, override policy and offset flush interval', () => {
    const compose = readFileSync(join(projectRoot, 'docker-compose.yml'), 'utf8');
    const expected = WORKER_SECURITY_PROPERTIES.map((property) => {
      const [key = '', value = ''] = property.split('=');
      return `CONNECT_${key.replace(/\./g, '_').toUpperCase()}: ${value}`;
    });
    for (const line of expected) expect(compose).toContain(line);
    // The Debezium image sets offset.flush.interval.ms from its own variable (test/compose/ checks the rest).
    expect(compose).toMatch(new RegExp(`^\\s+OFFSET_FLUSH_INTERVAL_MS: ${OFFSET_FLUSH_INTERVAL_MS}$`, 'm'));
    expect(compose).toMatch(/^\s+DEBEZIUM_DB_PASSWORD: \S+/m);
  });

  it('a stack worker started with an older configuration is outdated, so `stack start` restarts it', () => {
    const home = mkdtempSync(join(tmpdir(), 'stagefront-outdated-'));
    try {
      const layout = stackLayout({ ...process.env, STACK_HOME: home });
      const worker = connectComponent(layout);
      const propertiesFile = join(home, 'connect', 'connect-distributed.properties');
      expect(worker.outdated?.()).toBe(false); // never started from this home
      mkdirSync(join(home, 'connect'));
      writeFileSync(
        propertiesFile,
        workerProperties(layout).replace('connector.client.config.override.policy=Allowlist\n', ''),
      );
      expect(worker.outdated?.()).toBe(true);
      writeFileSync(propertiesFile, workerProperties(layout));
      // Its REST users and JAAS files are part of its configuration too (read once at start).
      const auth = restAuthFiles(layout);
      expect(worker.outdated?.()).toBe(true);
      writeFileSync(auth.users, restUsersFile([LOCAL_CONNECT_USER]));
      writeFileSync(auth.jaas, restJaasConfig(auth.users));
      expect(worker.outdated?.()).toBe(false);
      writeFileSync(
        auth.users,
        restUsersFile([LOCAL_CONNECT_USER, { username: 'another', password: 'other-password' }]),
      );
      expect(worker.outdated?.()).toBe(true);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});
