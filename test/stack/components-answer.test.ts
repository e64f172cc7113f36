import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { connectFetch } from '../../connectors/connect-client.js';
import { createKafka } from '../../lib/kafka.js';
import { createSchemaRegistry, decodeWithSchema, encodeWithSchema, registerAvroSchema } from '../../lib/schema-registry.js';
import { projectRoot } from '../../stack/config.js';
import { installLeakGuard } from '../support/leak-guard.js';
import { testLogger } from '../support/seat-pipeline.js';
import { adminQuery, requireStack, uniqueName } from '../support/stack.js';

const stack = requireStack();
installLeakGuard();

describe('every component of the native stack answers its own protocol', () => {
  it('Postgres runs SQL, with logical decoding on', async () => {
    const { rows } = await adminQuery(stack.postgresAdminUrl, "select current_setting('wal_level') as wal_level, version()");
    expect(rows[0].wal_level).toBe('logical');
    expect(rows[0].version).toMatch(/PostgreSQL 1[5-9]/);
  });

  it('Kafka gives metadata to kafkajs', async () => {
    const admin = createKafka({ brokers: stack.kafkaBrokers, clientId: 'stack-test', logger: testLogger }).admin();
    await admin.connect();
    try {
      const cluster = await admin.describeCluster();
      expect(cluster.brokers).toHaveLength(1);
      expect(cluster.controller).not.toBeNull();
    } finally {
      await admin.disconnect();
    }
  });

  it('Connect lists the Debezium Postgres connector and the Outbox Event Router', async () => {
    const plugins = (await (await connectFetch(stack.connect, '/connector-plugins?connectorsOnly=false')).json()) as { class: string }[];
    const classes = plugins.map((p) => p.class);
    expect(classes).toContain('io.debezium.connector.postgresql.PostgresConnector');
    expect(classes).toContain('io.debezium.transforms.outbox.EventRouter');
    expect(classes).toContain('io.debezium.converters.BinaryDataConverter');
  });

  it('the registry registers an Avro schema and gives it back by id through /apis/ccompat/v7', async () => {
    const registry = createSchemaRegistry(stack.registryUrl);
    const schema = readFileSync(join(projectRoot, 'events/schemas/seat-released.avsc'), 'utf8');
    const id = await registerAvroSchema(registry, uniqueName('stack.probe'), schema);
    const fetched = await registry.client.getSchema(id);
    expect(fetched).toBeDefined();
    const payload = { seat_id: 's', show_id: 'show', section: 'A', hold_id: 'h', released_at: 1_700_000_000_000 };
    const bytes = await encodeWithSchema(registry, id, payload);
    expect(await decodeWithSchema(createSchemaRegistry(stack.registryUrl), bytes)).toMatchObject(payload);
  });
});
