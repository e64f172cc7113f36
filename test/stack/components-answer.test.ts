import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { basicAuthorization, connectFetch } from '../../connectors/connect-client.js';
import { createKafka } from '../../lib/kafka.js';
import {
  createSchemaRegistry,
  decodeWithSchema,
  encodeWithSchema,
  registerAvroSchema,
} from '../../lib/schema-registry.js';
import { LOCAL_CONNECT_USER, localConnectApi, projectRoot } from '../../stack/config.js';
import { installLeakGuard } from '../support/leak-guard.js';
import { testLogger } from '../support/seat-pipeline.js';
import { adminQuery, requireStack, uniqueName } from '../support/stack.js';

const stack = requireStack();
installLeakGuard();

describe('every component of the native stack answers its own protocol', () => {
  it('Postgres runs SQL, with logical decoding on', async () => {
    const { rows } = await adminQuery(
      stack.postgresAdminUrl,
      "select current_setting('wal_level') as wal_level, version()",
    );
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
    const plugins = (await (await connectFetch(stack.connect, '/connector-plugins?connectorsOnly=false')).json()) as {
      class: string;
    }[];
    const classes = plugins.map((p) => p.class);
    expect(classes).toContain('io.debezium.connector.postgresql.PostgresConnector');
    expect(classes).toContain('io.debezium.transforms.outbox.EventRouter');
    expect(classes).toContain('io.debezium.converters.BinaryDataConverter');
  });

  it("Connect's REST API refuses a request without credentials or with a wrong password (401), on every worker of the stack", async () => {
    for (const url of stack.connectUrls) {
      expect((await fetch(`${url}/connectors`)).status, `${url} without credentials`).toBe(401);
      expect(
        (
          await fetch(`${url}/connectors`, {
            headers: { authorization: basicAuthorization(LOCAL_CONNECT_USER.username, 'wrong') },
          })
        ).status,
        `${url} with a wrong password`,
      ).toBe(401);
      expect((await connectFetch(localConnectApi(url), '/connectors')).status, `${url} with the local user`).toBe(200);
    }
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
