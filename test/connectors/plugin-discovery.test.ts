/**
 * Issue 8 (Kafka Connect start-up): the worker finds its plugins through their service manifests
 * only (plugin.discovery=service_load), with no reflection scan of every plugin jar at each start.
 * A plugin class without a manifest would then be invisible to the worker, so this starts a worker
 * of its own with the stack's worker properties and checks that every class the outbox connector
 * configuration names is one it lists.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectFetch } from '../../connectors/connect-client.js';
import { OUTBOX_CONNECTOR_FILE } from '../../connectors/outbox-connector.js';
import { localConnectApi, projectRoot, stackLayout } from '../../stack/config.js';
import {
  PLUGIN_DISCOVERY_PROPERTIES,
  WORKER_SECURITY_PROPERTIES,
  outboxProducerOverrides,
  workerProperties,
} from '../../stack/connect.js';
import { startConnectWorker, type ConnectWorker } from '../support/connect-worker.js';
import { installLeakGuard } from '../support/leak-guard.js';
import { requireStack } from '../support/stack.js';

requireStack();
installLeakGuard();

/** Every Java class the connector file names: the connector, converters, transforms, predicates. */
function classesNamed(file: string): string[] {
  const config = JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>;
  return [
    ...new Set(
      Object.values(config).filter((value) => /^(org\.apache\.kafka|io\.debezium)\.[\w.]+\.[A-Z]\w*$/.test(value)),
    ),
  ].sort();
}

describe('the Connect worker finds its plugins through service manifests only', () => {
  let worker: ConnectWorker;
  beforeAll(async () => {
    worker = await startConnectWorker('plugins');
  });
  afterAll(async () => worker?.stop());

  it('lists every class the outbox connector configuration uses, with plugin.discovery=service_load', async () => {
    expect(workerProperties(stackLayout())).toContain('plugin.discovery=service_load\n');
    const named = classesNamed(OUTBOX_CONNECTOR_FILE);
    expect(named).toEqual(
      expect.arrayContaining([
        'io.debezium.connector.postgresql.PostgresConnector',
        'io.debezium.converters.BinaryDataConverter',
        'io.debezium.transforms.outbox.EventRouter',
        'org.apache.kafka.connect.json.JsonConverter',
        'org.apache.kafka.connect.storage.SimpleHeaderConverter',
        'org.apache.kafka.connect.storage.StringConverter',
        'org.apache.kafka.connect.transforms.Filter',
        'org.apache.kafka.connect.transforms.predicates.TopicNameMatches',
      ]),
    );
    const response = await connectFetch(localConnectApi(worker.url), '/connector-plugins?connectorsOnly=false');
    expect(response.status).toBe(200);
    const listed = new Set(((await response.json()) as { class: string }[]).map((plugin) => plugin.class));
    expect(named.filter((name) => !listed.has(name))).toEqual([]);
  });
});

describe('docker-compose.yml discovers plugins and allows overrides like the native stack', () => {
  it('sets plugin.discovery, and allows exactly the producer settings the connector overrides', () => {
    const compose = readFileSync(join(projectRoot, 'docker-compose.yml'), 'utf8');
    for (const property of PLUGIN_DISCOVERY_PROPERTIES) {
      const [key = '', value = ''] = property.split('=');
      expect(compose).toContain(`CONNECT_${key.replace(/\./g, '_').toUpperCase()}: ${value}`);
    }
    const overrides = outboxProducerOverrides();
    expect(overrides).toContain('linger.ms');
    expect(WORKER_SECURITY_PROPERTIES).toContain(`connector.client.config.override.allowlist=${overrides.join(',')}`);
  });
});
