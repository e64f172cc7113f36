/**
 * The worker properties the Debezium Connect image writes from its environment, as its entrypoint
 * (debezium/container-images, connect-base/3.6/docker-entrypoint.sh) does: first it sets a few
 * CONNECT_* variables from its own variables (with their defaults), overwriting any given value,
 * then every CONNECT_* variable becomes a property (CONNECT_ dropped, lower case, _ → .).
 */

/** CONNECT_* variables the entrypoint sets from its own variables, with their defaults. */
const FROM_OWN_VARIABLES: readonly { property: string; from: string; fallback?: string }[] = [
  { property: 'bootstrap.servers', from: 'BOOTSTRAP_SERVERS', fallback: '0.0.0.0:9092' },
  { property: 'group.id', from: 'GROUP_ID', fallback: '1' },
  { property: 'config.storage.topic', from: 'CONFIG_STORAGE_TOPIC' },
  { property: 'offset.storage.topic', from: 'OFFSET_STORAGE_TOPIC' },
  { property: 'status.storage.topic', from: 'STATUS_STORAGE_TOPIC' },
  { property: 'key.converter', from: 'KEY_CONVERTER', fallback: 'org.apache.kafka.connect.json.JsonConverter' },
  { property: 'value.converter', from: 'VALUE_CONVERTER', fallback: 'org.apache.kafka.connect.json.JsonConverter' },
  { property: 'task.shutdown.graceful.timeout.ms', from: 'SHUTDOWN_TIMEOUT', fallback: '10000' },
  { property: 'offset.flush.interval.ms', from: 'OFFSET_FLUSH_INTERVAL_MS', fallback: '60000' },
  { property: 'offset.flush.timeout.ms', from: 'OFFSET_FLUSH_TIMEOUT_MS', fallback: '5000' },
  { property: 'rest.advertised.port', from: 'ADVERTISED_PORT', fallback: '8083' },
  { property: 'rest.advertised.host.name', from: 'ADVERTISED_HOST_NAME', fallback: '<container address>' },
  { property: 'rest.port', from: 'REST_PORT', fallback: '8083' },
  { property: 'rest.host.name', from: 'REST_HOST_NAME', fallback: '<container address>' },
];

/** The worker's properties (key → value) for a container environment. */
export function debeziumWorkerProperties(env: Readonly<Record<string, string>>): Map<string, string> {
  const connectEnv: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (name.startsWith('CONNECT_')) connectEnv[name] = value;
  for (const { property, from, fallback } of FROM_OWN_VARIABLES) {
    const value = env[from] || fallback;
    const name = `CONNECT_${property.replace(/\./g, '_').toUpperCase()}`;
    // status.storage.topic is the one it sets only when given.
    if (value !== undefined) connectEnv[name] = value;
    else if (from !== 'STATUS_STORAGE_TOPIC') connectEnv[name] = '';
  }
  const properties = new Map<string, string>();
  for (const [name, value] of Object.entries(connectEnv)) {
    properties.set(name.slice('CONNECT_'.length).toLowerCase().replace(/_/g, '.'), value);
  }
  return properties;
}
