/**
 * Which environment variables each image of docker-compose.yml reads, and where in the image's
 * own source that is defined. The compose tests allow a service only variables its image reads
 * (and forbid those its entrypoint overwrites), and docs/docker-compose.md shows this table as
 * renderImageVariablesTable() writes it (a test compares them).
 *
 * Read from the images' source repositories: the entrypoint scripts named in `source`.
 */
import { NODE_24 } from '../../stack/node-runtime.js';

interface VariablePrefix {
  prefix: string;
  /** Names with the prefix that are not passed on the way the prefix says. */
  except?: readonly string[];
  what: string;
}

export interface ImageVariables {
  /** The image as docker-compose.yml names it, without the tag. */
  image: string;
  /**
   * The tag, for images whose version stack/versions.json does not hold (the native stack does
   * not run them). Images it does hold take their tag from it.
   */
  tag?: string;
  /** Where the image reads its variables: repository and file(s). */
  source: string;
  /** Variables read by name, and what for. */
  reads: Readonly<Record<string, string>>;
  /** Families of variables turned into configuration. */
  prefixes?: readonly VariablePrefix[];
  /** Variables the entrypoint sets itself from others, so a value given to it is lost. */
  overwritten?: Readonly<Record<string, string>>;
}

export const IMAGE_VARIABLES: readonly ImageVariables[] = [
  {
    image: 'postgres',
    source: 'docker-library/postgres: 15/bookworm/docker-entrypoint.sh',
    reads: {
      POSTGRES_PASSWORD: 'Password of the superuser, given to initdb (also POSTGRES_PASSWORD_FILE).',
      POSTGRES_USER: 'Name of the superuser (default postgres).',
      POSTGRES_DB: 'Database created at init (default: the user name).',
      POSTGRES_INITDB_ARGS: 'Extra initdb arguments.',
      POSTGRES_INITDB_WALDIR: 'Separate WAL directory for initdb.',
      POSTGRES_HOST_AUTH_METHOD:
        'Authentication method of the pg_hba.conf line for host connections (default scram-sha-256).',
      PGDATA: 'Data directory.',
    },
    prefixes: [],
  },
  {
    image: 'apache/kafka',
    source:
      'apache/kafka: docker/resources/common-scripts/run, configureDefaults and configure, docker/jvm/launch; core/src/main/scala/kafka/docker/KafkaDockerWrapper.scala (the `KAFKA_*` to property mapping and its exceptions)',
    reads: {
      CLUSTER_ID: 'KRaft cluster id the storage is formatted with (a fixed default when unset).',
      KAFKA_HEAP_OPTS: 'JVM heap options, read by kafka-server-start.sh (not a server property).',
      KAFKA_OPTS: 'Extra JVM options (not a server property).',
      KAFKA_JMX_OPTS: 'JMX options (not a server property).',
      KAFKA_LOG4J_ROOT_LOGLEVEL: 'Root log level (not a server property).',
    },
    prefixes: [
      {
        prefix: 'KAFKA_',
        except: [
          'KAFKA_VERSION',
          'KAFKA_HEAP_OPTS',
          'KAFKA_LOG4J_OPTS',
          'KAFKA_OPTS',
          'KAFKA_JMX_OPTS',
          'KAFKA_JVM_PERFORMANCE_OPTS',
          'KAFKA_GC_LOG_OPTS',
          'KAFKA_LOG4J_ROOT_LOGLEVEL',
          'KAFKA_LOG4J_LOGGERS',
          'KAFKA_TOOLS_LOG4J_LOGLEVEL',
          'KAFKA_JMX_HOSTNAME',
        ],
        what: 'a broker property: `KAFKA_` dropped, lower case, `_` becomes `.` (`KAFKA_NUM_PARTITIONS` → `num.partitions`)',
      },
    ],
  },
  {
    image: 'quay.io/debezium/connect',
    source: 'debezium/container-images: connect-base/3.6/docker-entrypoint.sh',
    reads: {
      BOOTSTRAP_SERVERS: 'bootstrap.servers.',
      GROUP_ID: 'group.id (default 1).',
      CONFIG_STORAGE_TOPIC: 'config.storage.topic (required).',
      OFFSET_STORAGE_TOPIC: 'offset.storage.topic (required).',
      STATUS_STORAGE_TOPIC: 'status.storage.topic.',
      OFFSET_FLUSH_INTERVAL_MS: 'offset.flush.interval.ms (default 60000).',
      OFFSET_FLUSH_TIMEOUT_MS: 'offset.flush.timeout.ms (default 5000).',
      SHUTDOWN_TIMEOUT: 'task.shutdown.graceful.timeout.ms (default 10000).',
      KEY_CONVERTER: 'key.converter (default JsonConverter).',
      VALUE_CONVERTER: 'value.converter (default JsonConverter).',
      HOST_NAME: "Default of REST_HOST_NAME and ADVERTISED_HOST_NAME (default: the container's address).",
      ADVERTISED_HOST_NAME: 'rest.advertised.host.name.',
      ADVERTISED_PORT: 'rest.advertised.port (default 8083).',
      HEAP_OPTS: 'JVM heap options (passed on as KAFKA_HEAP_OPTS).',
      LOG_LEVEL: 'Log level of the root logger.',
      REST_HOST_NAME: 'rest.host.name.',
      REST_PORT: 'rest.port (default 8083).',
      ENABLE_APICURIO_CONVERTERS: 'Puts the Apicurio converters on the plugin path.',
      ENABLE_JOLOKIA: 'Starts the Jolokia agent.',
      ENABLE_JFR: 'Starts Java Flight Recorder.',
      JMXHOST: 'JMX host (with JMXPORT).',
      JMXPORT: 'JMX port (with JMXHOST).',
      KAFKA_OPTS:
        "JVM options of the worker, read by Kafka's start script: here the JAAS file of the REST API's basic authentication.",
      DEBEZIUM_DB_PASSWORD:
        "Not the image's: read by the env config provider when a connector configuration says ${env:DEBEZIUM_DB_PASSWORD}.",
    },
    prefixes: [
      {
        prefix: 'CONNECT_',
        what: 'a worker property: `CONNECT_` dropped, lower case, `_` becomes `.` (`CONNECT_PLUGIN_DISCOVERY` → `plugin.discovery`)',
      },
    ],
    overwritten: {
      CONNECT_BOOTSTRAP_SERVERS: 'set from BOOTSTRAP_SERVERS',
      CONNECT_GROUP_ID: 'set from GROUP_ID',
      CONNECT_CONFIG_STORAGE_TOPIC: 'set from CONFIG_STORAGE_TOPIC',
      CONNECT_OFFSET_STORAGE_TOPIC: 'set from OFFSET_STORAGE_TOPIC',
      CONNECT_KEY_CONVERTER: 'set from KEY_CONVERTER',
      CONNECT_VALUE_CONVERTER: 'set from VALUE_CONVERTER',
      CONNECT_TASK_SHUTDOWN_GRACEFUL_TIMEOUT_MS: 'set from SHUTDOWN_TIMEOUT',
      CONNECT_OFFSET_FLUSH_INTERVAL_MS: 'set from OFFSET_FLUSH_INTERVAL_MS (default 60000)',
      CONNECT_OFFSET_FLUSH_TIMEOUT_MS: 'set from OFFSET_FLUSH_TIMEOUT_MS (default 5000)',
      CONNECT_REST_ADVERTISED_HOST_NAME: 'set from ADVERTISED_HOST_NAME',
      CONNECT_REST_ADVERTISED_PORT: 'set from ADVERTISED_PORT',
      CONNECT_REST_HOST_NAME: 'set from REST_HOST_NAME',
      CONNECT_REST_PORT: 'set from REST_PORT',
      KAFKA_HEAP_OPTS: 'set from HEAP_OPTS',
      CONFIG_STORAGE_REPLICATION_FACTOR:
        'read by nothing: the replication factors are CONNECT_*_STORAGE_REPLICATION_FACTOR',
      OFFSET_STORAGE_REPLICATION_FACTOR:
        'read by nothing: the replication factors are CONNECT_*_STORAGE_REPLICATION_FACTOR',
      STATUS_STORAGE_REPLICATION_FACTOR:
        'read by nothing: the replication factors are CONNECT_*_STORAGE_REPLICATION_FACTOR',
    },
  },
  {
    image: 'apicurio/apicurio-registry',
    source:
      'Apicurio/apicurio-registry: app/src/main/resources/application.properties (Quarkus configuration: a property is also read from the variable named like it in upper case, dots and dashes as underscores); `JAVA_OPTS_APPEND`: run-java.sh of the Red Hat UBI OpenJDK runtime image it is built on',
    reads: {
      JAVA_OPTS_APPEND: "JVM options added to the image's own.",
    },
    prefixes: [
      {
        prefix: 'APICURIO_',
        what: 'a registry property: lower case, `_` becomes `.` (`APICURIO_STORAGE_KIND` → `apicurio.storage.kind`)',
      },
      {
        prefix: 'QUARKUS_',
        what: 'a Quarkus property the same way (`QUARKUS_HTTP_PORT` → `quarkus.http.port`)',
      },
    ],
  },
  {
    image: 'axllent/mailpit',
    tag: 'v1.30.5',
    source: 'axllent/mailpit: cmd/root.go (initConfigFromEnv)',
    reads: {
      MP_MAX_MESSAGES: 'Messages kept before the oldest are deleted (default 500).',
      MP_DISABLE_VERSION_CHECK: 'No look-ups of the latest release.',
      MP_SMTP_BIND_ADDR: 'SMTP listener (default [::]:1025).',
      MP_UI_BIND_ADDR: 'Web page and API listener (default [::]:8025).',
      MP_DATABASE: 'Database file (default: a temporary one).',
      MP_IGNORE_DUPLICATE_IDS: 'Drop messages whose Message-ID was seen (off: the rehearsal counts duplicates).',
    },
    prefixes: [],
  },
  {
    image: 'prom/alertmanager',
    source:
      'prometheus/alertmanager: Dockerfile (ENTRYPOINT the alertmanager binary; it is configured by flags, no variables)',
    reads: {},
    prefixes: [],
  },
  {
    image: 'prom/prometheus',
    source:
      'prometheus/prometheus: Dockerfile (ENTRYPOINT the prometheus binary; it is configured by flags, no variables)',
    reads: {},
    prefixes: [],
  },
  {
    image: 'grafana/grafana',
    tag: '12.2.1',
    source:
      'grafana/grafana: packaging/docker/run.sh (`GF_PATHS_*`, `*__FILE`) and pkg/setting/setting.go (`GF_<SECTION>_<KEY>` overrides any grafana.ini setting)',
    reads: {
      GF_PATHS_CONFIG: 'grafana.ini path.',
      GF_PATHS_DATA: 'Data folder.',
      GF_PATHS_HOME: 'Home folder.',
      GF_PATHS_LOGS: 'Log folder.',
      GF_PATHS_PLUGINS: 'Plugins folder.',
      GF_PATHS_PROVISIONING: 'Provisioning folder (default /etc/grafana/provisioning).',
    },
    prefixes: [
      {
        prefix: 'GF_',
        what: 'a grafana.ini setting, `GF_<SECTION>_<KEY>` in upper case (`GF_AUTH_ANONYMOUS_ENABLED` → `[auth.anonymous] enabled`)',
      },
    ],
  },
  {
    image: 'node',
    // The Node 24 the test suite also runs on (its second run, stack/node-runtime.ts).
    tag: `${NODE_24.version}-bookworm-slim`,
    source: 'this project: the settings table of each program the service runs (lib/settings.ts defineSettings)',
    reads: {},
    prefixes: [],
  },
];

/** The entry of `image` (without tag), or undefined. */
export function imageVariables(image: string): ImageVariables | undefined {
  return IMAGE_VARIABLES.find((entry) => entry.image === image);
}

/** Whether the image reads `name`, and if not, why (undefined when it does). */
export function unreadVariable(entry: ImageVariables, name: string): string | undefined {
  const overwritten = entry.overwritten?.[name];
  if (overwritten !== undefined) return `${name} is lost: ${overwritten}`;
  if (name in entry.reads) return undefined;
  const family = entry.prefixes?.find((p) => name.startsWith(p.prefix) && !(p.except ?? []).includes(name));
  if (family) return undefined;
  return `${entry.image} does not read ${name} (${entry.source})`;
}

const cell = (text: string): string => text.replace(/\|/g, '\\|');

/** The Markdown table docs/docker-compose.md shows between its image-variables markers. */
export function renderImageVariablesTable(): string {
  const lines = ['| Image | Variables it reads | Lost when set | Defined in |', '| --- | --- | --- | --- |'];
  for (const entry of IMAGE_VARIABLES) {
    const names = Object.keys(entry.reads).map((name) => `\`${name}\``);
    const families = (entry.prefixes ?? []).map(
      (p) =>
        `\`${p.prefix}*\`${p.except?.length ? ` except ${p.except.map((e) => `\`${e}\``).join(', ')}` : ''}: ${p.what}`,
    );
    const reads =
      entry.image === 'node'
        ? 'the settings of the programs the service runs (docs/configuration.md)'
        : [...names, ...families].join('; ') || 'none (flags only)';
    const lost =
      Object.entries(entry.overwritten ?? {})
        .map(([name, why]) => `\`${name}\` (${why})`)
        .join('; ') || '-';
    lines.push(`| \`${entry.image}\` | ${cell(reads)} | ${cell(lost)} | ${cell(entry.source)} |`);
  }
  return `${lines.join('\n')}\n`;
}
