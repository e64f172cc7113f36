import { describe, expect, it } from 'vitest';
import { deleteConnector, putConnectorConfig, waitUntilRunning } from '../../connectors/connect-client.js';
import { createKafka } from '../../lib/kafka.js';
import { waitFor } from '../../lib/wait.js';
import { installLeakGuard } from '../support/leak-guard.js';
import { collectRecords, dropSlot, testLogger } from '../support/seat-pipeline.js';
import { adminQuery, createTestDatabase, requireStack, uniqueName } from '../support/stack.js';

const stack = requireStack();
installLeakGuard();

describe('smoke pipeline', () => {
  it('a Debezium connector on a scratch table delivers an inserted row to a Kafka topic that kafkajs reads', async () => {
    const database = await createTestDatabase('smoke');
    const name = uniqueName('smoke').toLowerCase();
    try {
      await adminQuery(database.url, 'create table scratch (id int primary key, note text)');
      await adminQuery(database.url, `create publication ${name} for table scratch`);
      await putConnectorConfig(stack.connect, name, {
        'connector.class': 'io.debezium.connector.postgresql.PostgresConnector',
        'plugin.name': 'pgoutput',
        'database.hostname': '127.0.0.1',
        'database.port': String(stack.postgresPort),
        'database.user': 'postgres',
        'database.password': 'postgres',
        'database.dbname': database.name,
        'topic.prefix': name,
        'slot.name': name,
        'publication.name': name,
        'publication.autocreate.mode': 'disabled',
        'snapshot.mode': 'no_data',
        'topic.creation.default.partitions': '1',
        'topic.creation.default.replication.factor': '1',
        'key.converter': 'org.apache.kafka.connect.json.JsonConverter',
        'key.converter.schemas.enable': 'false',
        'value.converter': 'org.apache.kafka.connect.json.JsonConverter',
        'value.converter.schemas.enable': 'false',
      });
      await waitUntilRunning(stack.connect, name, 60_000);
      const topic = `${name}.public.scratch`;
      await adminQuery(database.url, "insert into scratch values (1, 'hello from the WAL')");
      await waitFor(async () => (await listTopics(stack.kafkaBrokers)).includes(topic), {
        timeoutMs: 30_000,
        description: `topic ${topic}`,
      });
      const collector = await collectRecords([topic]);
      try {
        const records = await waitFor(() => (collector.records.length > 0 ? collector.records : undefined), {
          timeoutMs: 30_000,
          description: 'the inserted row on the topic',
        });
        const value = JSON.parse(records[0]?.value.toString('utf8') ?? '{}') as {
          after?: { id: number; note: string };
          op?: string;
        };
        expect(value.op).toBe('c');
        expect(value.after).toEqual({ id: 1, note: 'hello from the WAL' });
      } finally {
        await collector.stop();
      }
    } finally {
      await deleteConnector(stack.connect, name);
      await dropSlot(stack.postgresAdminUrl, name);
      await database.drop();
    }
  });
});

async function listTopics(brokers: string[]): Promise<string[]> {
  const admin = createKafka({ brokers, clientId: 'smoke', logger: testLogger }).admin();
  await admin.connect();
  try {
    return await admin.listTopics();
  } finally {
    await admin.disconnect();
  }
}
