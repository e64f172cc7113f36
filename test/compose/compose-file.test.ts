/**
 * docker-compose.yml, checked without Docker (it cannot run on this machine): the file against
 * the Compose specification's JSON schema, every command an npm script whose programs get every
 * setting they need and nothing they do not read, image tags from stack/versions.json, every
 * variable set on an image one that image reads (test/compose/image-variables.ts, shown in
 * docs/docker-compose.md), the start order, the passwords, and the Connect worker the image's
 * entrypoint would configure, against the native stack's.
 *
 * compose-spec.json is a copy of schema/compose-spec.json of the compose-spec/compose-go
 * repository (commit faa67b213c471d63997f55cc145e6eab9dc3630f, JSON Schema 2020-12), under the
 * Apache License 2.0.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv2020 from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { COMPOSE_ROLES } from '../../compose/setup-settings.js';
import { OFFSET_FLUSH_INTERVAL_MS } from '../../connectors/slot-confirmation.js';
import { BROKER_SESSION_PROPERTIES } from '../../stack/kafka.js';
import { slotMonitorSettings } from '../../monitors/slot-monitor/settings.js';
import { composeSetupSettings } from '../../compose/setup-settings.js';
import { parseSettings, settingsMarkdownTable } from '../../lib/settings.js';
import { seatServiceSettings } from '../../seat-service/settings.js';
import { CONNECT_SECRET_ENV, restJaasConfig, restUsersFile, workerProperties } from '../../stack/connect.js';
import { LOCAL_CONNECT_USER, projectRoot, readVersions, stackLayout } from '../../stack/config.js';
import { NON_SEAT_DATABASES } from '../../stack/postgres.js';
import { debeziumWorkerProperties } from './debezium-entrypoint.js';
import {
  SCRIPT_PROGRAMS,
  commandScripts,
  commandSteps,
  composeText,
  dependencies,
  healthcheckText,
  loadCompose,
  serviceEnv,
  splitImage,
  variablesRead,
  type ComposeService,
} from './compose-model.js';
import { IMAGE_VARIABLES, imageVariables, renderImageVariablesTable, unreadVariable } from './image-variables.js';

const compose = loadCompose();
const services = Object.entries(compose.services);
const NODE_IMAGE = 'node';

/** Services that run the project's programs (the Node image). */
const programServices = services.filter(([, service]) => splitImage(service.image ?? '').image === NODE_IMAGE);
/** One-shot services: nothing waits for them to be healthy, only to have finished. */
const ONE_SHOT = new Set(['setup', 'crowd']);
const longRunning = programServices.filter(([name]) => !ONE_SHOT.has(name));

function service(name: string): ComposeService {
  const found = compose.services[name];
  if (!found) throw new Error(`docker-compose.yml has no service ${name}`);
  return found;
}

/** Every string anywhere in a parsed YAML value. */
function strings(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(strings);
  if (value !== null && typeof value === 'object')
    return Object.entries(value).flatMap(([key, v]) => [key, ...strings(v)]);
  return [];
}

describe('docker-compose.yml is a valid Compose file', () => {
  it('validates against the Compose specification schema (test/compose/compose-spec.json)', () => {
    const schema = JSON.parse(readFileSync(join(projectRoot, 'test/compose/compose-spec.json'), 'utf8')) as object;
    const validate = new Ajv2020.default({ allErrors: true, strict: false }).compile(schema);
    const valid = validate(compose);
    expect(validate.errors ?? [], 'schema errors').toEqual([]);
    expect(valid).toBe(true);
  });

  it('has no $ that compose would interpolate (a literal $ is written $$)', () => {
    const interpolated = strings(compose).filter((text) => /\$(?!\$)/.test(text.replace(/\$\$/g, '')));
    expect(interpolated).toEqual([]);
  });

  it('mounts only files and folders that exist in the project', () => {
    const missing = services.flatMap(([name, s]) =>
      (s.volumes ?? [])
        .map((volume) => (typeof volume === 'string' ? (volume.split(':')[0] ?? '') : (volume.source ?? '')))
        .filter((source) => source.startsWith('.') && !existsSync(join(projectRoot, source)))
        .map((source) => `${name}: ${source}`),
    );
    expect(missing).toEqual([]);
  });
});

describe('every service command is an npm script whose programs get the settings they need', () => {
  const scripts = (
    JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
  ).scripts;

  it('runs the project programs from the one Node image, with the project mounted', () => {
    expect(programServices.map(([name]) => name).sort()).toEqual([
      'confirmation-email',
      'crowd',
      'hold-sweeper',
      'job-watchdog',
      'sales-ledger',
      'seat-availability',
      'setup',
      'slot-monitor',
    ]);
    expect(new Set(programServices.map(([, s]) => s.image)).size).toBe(1);
  });

  it.each(programServices)('%s: every step of its command is npm ci or an npm script of package.json', (_name, s) => {
    const steps = commandSteps(s.command);
    expect(steps.length).toBeGreaterThan(0);
    expect(steps.filter((step) => step.kind === 'other')).toEqual([]);
    for (const script of commandScripts(s.command)) {
      expect(Object.keys(scripts), `package.json scripts`).toContain(script);
      expect(Object.keys(SCRIPT_PROGRAMS), `settings of ${script} (test/compose/compose-model.ts)`).toContain(script);
    }
  });

  it.each(programServices)('%s: its environment is complete and valid for each program it runs', (_name, s) => {
    const env = serviceEnv(s);
    // parse throws the program's own ConfigError: one sentence per missing or bad setting.
    for (const script of commandScripts(s.command)) {
      const program = SCRIPT_PROGRAMS[script];
      if (program === undefined)
        throw new Error(`${script} has no settings in test/compose/compose-model.ts SCRIPT_PROGRAMS`);
      expect(() => program.parse(env)).not.toThrow();
    }
  });

  it.each(programServices)('%s: sets only variables its programs read', (_name, s) => {
    const read = variablesRead(commandScripts(s.command));
    expect(Object.keys(serviceEnv(s)).filter((variable) => !read.has(variable))).toEqual([]);
  });

  it('the setup installs the packages before it runs anything, and ends by applying the connector', () => {
    const steps = commandSteps(service('setup').command);
    expect(steps[0]).toEqual({ kind: 'npm-ci' });
    expect(commandScripts(service('setup').command)).toEqual(['compose:setup', 'connector']);
    expect(String(service('setup').command)).toMatch(/connector -- apply$/);
  });

  it('the crowd runs the rehearsal in external mode and writes its report inside the mounted project', () => {
    const env = serviceEnv(service('crowd'));
    expect(commandScripts(service('crowd').command)).toEqual(['rehearsal']);
    expect(env.REHEARSAL_STACK).toBe('external');
    const reportDir = env.REHEARSAL_REPORT_DIR ?? '';
    expect(reportDir.startsWith('/') || reportDir.startsWith('..')).toBe(false);
    expect(service('crowd').volumes).toContain('.:/app');
    expect(service('crowd').restart ?? 'no').toBe('no');
  });
});

describe('images: versions and the variables each one reads', () => {
  const versions = readVersions();
  const fromVersions: Record<string, string> = {
    postgres: versions.postgres,
    'apache/kafka': versions.kafka,
    'quay.io/debezium/connect': versions.debezium,
    'apicurio/apicurio-registry': versions.apicurio,
    'prom/alertmanager': `v${versions.alertmanager}`,
    'prom/prometheus': `v${versions.prometheus}`,
  };

  it.each(services)(
    "%s: its image has an exact tag: stack/versions.json's, or the table's for images the native stack does not run",
    (_name, s) => {
      const { image, tag } = splitImage(s.image ?? '');
      const entry = imageVariables(image);
      expect(entry, `${image} in test/compose/image-variables.ts`).toBeDefined();
      if (image in fromVersions) {
        expect(tag).toBe(fromVersions[image]);
        expect(entry?.tag).toBeUndefined();
      } else {
        expect(tag).toBe(entry?.tag);
        expect(tag).toMatch(/^v?\d+(\.\d+)+(-[a-z0-9-]+)?$/);
      }
    },
  );

  it.each(services.filter(([, s]) => splitImage(s.image ?? '').image !== NODE_IMAGE))(
    '%s: sets only variables its image reads',
    (_name, s) => {
      const entry = imageVariables(splitImage(s.image ?? '').image);
      if (!entry) throw new Error(`${s.image} is not in test/compose/image-variables.ts`);
      expect(
        Object.keys(serviceEnv(s))
          .map((name) => unreadVariable(entry, name))
          .filter((why) => why !== undefined),
      ).toEqual([]);
    },
  );

  it('the table lists each image once, and every image it lists is used', () => {
    const used = new Set(services.map(([, s]) => splitImage(s.image ?? '').image));
    expect(IMAGE_VARIABLES.map((entry) => entry.image).sort()).toEqual([...used].sort());
  });

  it('docs/docker-compose.md shows the table as test/compose/image-variables.ts renders it', () => {
    const doc = readFileSync(join(projectRoot, 'docs/docker-compose.md'), 'utf8');
    const block = /<!-- image-variables -->\n([\s\S]*?)<!-- \/image-variables -->/.exec(doc)?.[1];
    expect(block).toBe(renderImageVariablesTable());
  });

  it('docs/docker-compose.md lists every service with its image and what it waits for', () => {
    const doc = readFileSync(join(projectRoot, 'docs/docker-compose.md'), 'utf8');
    const rows = new Map(
      [...doc.matchAll(/^\| `([a-z-]+)` \| ([^|]+) \|[^|]+\|[^|]+\| ([^|]+) \|$/gm)].map((m) => [
        m[1] ?? '',
        { image: (m[2] ?? '').trim(), waits: (m[3] ?? '').trim() },
      ]),
    );
    expect([...rows.keys()].sort()).toEqual(services.map(([name]) => name).sort());
    for (const [name, s] of services) {
      const row = rows.get(name);
      const image =
        splitImage(s.image ?? '').image === NODE_IMAGE && name !== 'setup' ? 'the same Node image' : `\`${s.image}\``;
      expect(row?.image, name).toBe(image);
      if (name === 'crowd') continue; // "every program above, prometheus, mailpit"
      const waits = row?.waits === '-' ? [] : (row?.waits ?? '').split(', ');
      expect(waits.sort(), name).toEqual(Object.keys(dependencies(s)).sort());
    }
  });

  it('docs/docker-compose.md shows the settings of npm run compose:setup from its settings table', () => {
    const doc = readFileSync(join(projectRoot, 'docs/docker-compose.md'), 'utf8');
    const block = /<!-- settings:compose-setup -->\n([\s\S]*?)<!-- \/settings:compose-setup -->/.exec(doc)?.[1];
    expect(block).toBe(settingsMarkdownTable(composeSetupSettings));
  });
});

describe('everything starts in order, each part waited for until it really works', () => {
  it.each(services)(
    '%s: waits for healthy services with service_healthy and for one-shot ones to finish',
    (_name, s) => {
      for (const [dependency, condition] of Object.entries(dependencies(s))) {
        if (ONE_SHOT.has(dependency)) expect(condition, dependency).toBe('service_completed_successfully');
        else {
          expect(healthcheckText(service(dependency)), `${dependency} healthcheck`).not.toBe('');
          expect(condition, dependency).toBe('service_healthy');
        }
      }
    },
  );

  it('every service the others wait for has a healthcheck, one-shot services have none', () => {
    for (const [name, s] of services) {
      if (ONE_SHOT.has(name)) expect(s.healthcheck, name).toBeUndefined();
      else expect(healthcheckText(s), name).not.toBe('');
    }
  });

  it.each(services)('%s: depends (directly or through others) on every service its environment names', (name, s) => {
    const closure = new Set<string>();
    const visit = (from: string) => {
      for (const dependency of Object.keys(dependencies(service(from)))) {
        if (!closure.has(dependency)) {
          closure.add(dependency);
          visit(dependency);
        }
      }
    };
    visit(name);
    const named = new Set<string>();
    for (const value of Object.values(serviceEnv(s))) {
      for (const match of value.matchAll(/(?:^|[/@,])([a-z][a-z0-9-]*)(?::\d+|$)/g)) {
        const host = match[1] ?? '';
        if (host !== name && host in compose.services) named.add(host);
      }
    }
    expect([...named].filter((host) => !closure.has(host))).toEqual([]);
  });

  it("Postgres counts as healthy only once it answers over TCP in the registry's database (its init-time server has no TCP port)", () => {
    const check = healthcheckText(service('postgres'));
    expect(check).toMatch(/-h 127\.0\.0\.1/);
    expect(check).toMatch(/-d stagefront_registry/);
    expect(readFileSync(join(projectRoot, 'stack/postgres-docker-init.sh'), 'utf8')).toMatch(
      /create database stagefront_registry/,
    );
  });

  it("Postgres gets the native stack's access rules: its pg_hba.conf, and PUBLIC's CONNECT revoked on the same databases", () => {
    expect(JSON.stringify(service('postgres'))).toContain('./stack/pg_hba.conf:/etc/stagefront/pg_hba.conf:ro');
    const init = readFileSync(join(projectRoot, 'stack/postgres-docker-init.sh'), 'utf8');
    expect(init).toMatch(/cp \/etc\/stagefront\/pg_hba\.conf "\$PGDATA\/pg_hba\.conf"/);
    expect(/for database in ([^;]+);/.exec(init)?.[1]?.split(' ')).toEqual([...NON_SEAT_DATABASES]);
  });

  it.each(longRunning)('%s: listens on 0.0.0.0 and is healthy when its /readyz answers', (_name, s) => {
    const [script = ''] = commandScripts(s.command);
    const config = SCRIPT_PROGRAMS[script]?.parse(serviceEnv(s)) as { metricsHost: string; metricsPort: number };
    expect(config.metricsHost).toBe('0.0.0.0');
    expect(healthcheckText(s)).toContain(`http://127.0.0.1:${config.metricsPort}/readyz`);
    expect(dependencies(s).setup).toBe('service_completed_successfully');
  });

  it.each(longRunning)('%s: can be scaled (no fixed container name, no host port)', (_name, s) => {
    expect(s.container_name).toBeUndefined();
    expect(s.ports ?? []).toEqual([]);
  });

  it('the setup waits for Postgres, Kafka and Connect; the crowd for every program, Prometheus and Mailpit', () => {
    expect(dependencies(service('setup'))).toEqual({
      postgres: 'service_healthy',
      kafka: 'service_healthy',
      connect: 'service_healthy',
    });
    const crowd = dependencies(service('crowd'));
    for (const [name] of longRunning) expect(crowd[name], name).toBe('service_healthy');
    expect(crowd.prometheus).toBe('service_healthy');
    expect(crowd.mailpit).toBe('service_healthy');
  });

  it('the job watchdog starts after the hold sweeper is ready, and watches it at its own interval', () => {
    const watchdog = serviceEnv(service('job-watchdog'));
    const sweeper = SCRIPT_PROGRAMS['hold-sweeper']?.parse(serviceEnv(service('hold-sweeper'))) as {
      intervalMs: number;
    };
    expect(dependencies(service('job-watchdog'))['hold-sweeper']).toBe('service_healthy');
    expect(watchdog.JOB_WATCHDOG_JOBS).toMatch(new RegExp(`^hold-sweeper=${sweeper.intervalMs}:`));
  });
});

describe('passwords: each role logs in with the password the setup gave it', () => {
  const setup = serviceEnv(service('setup'));
  const passwords: Record<string, string | undefined> = {
    postgres: serviceEnv(service('postgres')).POSTGRES_PASSWORD,
    stagefront_service: setup.SEAT_SERVICE_DB_PASSWORD,
    stagefront_debezium: setup.DEBEZIUM_DB_PASSWORD,
    [COMPOSE_ROLES.consumer]: setup.CONSUMER_DB_PASSWORD,
    [COMPOSE_ROLES.slotMonitor]: setup.SLOT_MONITOR_DB_PASSWORD,
    [COMPOSE_ROLES.jobWatchdog]: setup.JOB_WATCHDOG_DB_PASSWORD,
  };

  it.each(services)('%s: its database URLs name a known role with its password, on postgres:5432', (_name, s) => {
    for (const [variable, value] of Object.entries(serviceEnv(s))) {
      if (!/^postgres(ql)?:\/\//.test(value)) continue;
      const url = new URL(value);
      expect(Object.keys(passwords), variable).toContain(url.username);
      expect(decodeURIComponent(url.password), `${variable} password`).toBe(passwords[url.username]);
      expect(`${url.hostname}:${url.port}`, variable).toBe('postgres:5432');
    }
  });

  it('every program that needs a password gets it, the same everywhere it appears', () => {
    for (const [name, s] of services) {
      const env = serviceEnv(s);
      for (const variable of ['SEAT_SERVICE_DB_PASSWORD', 'DEBEZIUM_DB_PASSWORD'] as const) {
        if (env[variable] !== undefined) expect(env[variable], `${name} ${variable}`).toBe(setup[variable]);
      }
    }
    const registry = serviceEnv(service('registry'));
    expect(registry.APICURIO_DATASOURCE_PASSWORD).toBe(passwords[registry.APICURIO_DATASOURCE_USERNAME ?? '']);
  });
});

describe("the Connect worker the Debezium image configures is the native stack's", () => {
  const connect = serviceEnv(service('connect'));
  const composed = debeziumWorkerProperties(connect);
  // Addresses differ by design: the container's listeners and Kafka, the image's plugin folder.
  const ADDRESSES = new Set([
    'bootstrap.servers',
    'plugin.path',
    'listeners',
    'rest.advertised.host.name',
    'rest.advertised.port',
  ]);

  it('has every property of stack/connect.ts with the same value (config provider, overrides, offset flush, plugin discovery)', () => {
    const native = workerProperties(stackLayout())
      .split('\n')
      .filter((line) => line.includes('='));
    const differing = native
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)] as const)
      .filter(([key]) => !ADDRESSES.has(key))
      .filter(([key, value]) => composed.get(key) !== value)
      .map(([key, value]) => `${key}: native ${value}, compose ${composed.get(key) ?? '(unset)'}`);
    expect(differing).toEqual([]);
  });

  it('flushes offsets as often as the slot monitor assumes', () => {
    expect(composed.get('offset.flush.interval.ms')).toBe(String(OFFSET_FLUSH_INTERVAL_MS));
    const monitor = parseSettings(slotMonitorSettings, serviceEnv(service('slot-monitor')));
    expect(monitor.offsetFlushIntervalMs).toBe(OFFSET_FLUSH_INTERVAL_MS);
  });

  it("holds the connector's secret the env config provider may read, with the setup's value", () => {
    for (const variable of CONNECT_SECRET_ENV) expect(connect[variable]).toBe(serviceEnv(service('setup'))[variable]);
    expect(composed.get('config.providers.env.param.allowlist.pattern')).toBe(CONNECT_SECRET_ENV.join('|'));
  });

  it('requires credentials: the JAAS and users files the launcher writes, mounted read-only and named by KAFKA_OPTS; the setup and the healthcheck sign in as that user', () => {
    const mounts = new Map(
      ((service('connect') as { volumes?: string[] }).volumes ?? []).map((v) => [v.split(':')[1] ?? '', v]),
    );
    const jaasPath = /-Djava\.security\.auth\.login\.config=(\S+)/.exec(connect.KAFKA_OPTS ?? '')?.[1] ?? '';
    const usersPath = '/etc/stagefront/connect-rest-users.properties';
    expect(mounts.get(jaasPath)).toBe(`./compose/connect-rest-jaas.conf:${jaasPath}:ro`);
    expect(mounts.get(usersPath)).toBe(`./compose/connect-rest-users.properties:${usersPath}:ro`);
    expect(readFileSync(join(projectRoot, 'compose/connect-rest-jaas.conf'), 'utf8')).toBe(restJaasConfig(usersPath));
    expect(readFileSync(join(projectRoot, 'compose/connect-rest-users.properties'), 'utf8')).toBe(
      restUsersFile([LOCAL_CONNECT_USER]),
    );
    const setup = serviceEnv(service('setup'));
    expect({ user: setup.CONNECT_USERNAME, password: setup.CONNECT_PASSWORD }).toEqual({
      user: LOCAL_CONNECT_USER.username,
      password: LOCAL_CONNECT_USER.password,
    });
    expect(healthcheckText(service('connect'))).toContain(
      `curl -fs -u ${LOCAL_CONNECT_USER.username}:${LOCAL_CONNECT_USER.password} http://localhost:8083/`,
    );
    // Every program that calls Connect signs in (CONNECT_URL goes with the two credentials).
    for (const [name, s] of services) {
      const env = serviceEnv(s);
      if (env.CONNECT_URL !== undefined)
        expect({ name, user: env.CONNECT_USERNAME, password: env.CONNECT_PASSWORD }).toEqual({
          name,
          user: setup.CONNECT_USERNAME,
          password: setup.CONNECT_PASSWORD,
        });
    }
  });

  it('listens on the port its healthcheck and the programs use', () => {
    expect(composed.get('listeners')).toBe('http://0.0.0.0:8083');
    expect(healthcheckText(service('connect'))).toContain('localhost:8083');
    expect(serviceEnv(service('setup')).CONNECT_URL).toBe('http://connect:8083');
  });
});

describe("the Kafka broker the image configures is the native stack's", () => {
  it('has the broker session of stack/kafka.ts (a broker killed with -9 registers again within seconds)', () => {
    const env = serviceEnv(service('kafka'));
    const differing = BROKER_SESSION_PROPERTIES.map((line) => line.split('=') as [string, string])
      .map(([key, value]) => [`KAFKA_${key.toUpperCase().replaceAll('.', '_')}`, value] as const)
      .filter(([variable, value]) => env[variable] !== value)
      .map(([variable, value]) => `${variable}: native ${value}, compose ${env[variable] ?? '(unset)'}`);
    expect(differing).toEqual([]);
  });
});

describe('the programs agree with each other and with the services they reach', () => {
  const parsed = (name: string, script: string) => SCRIPT_PROGRAMS[script]?.parse(serviceEnv(service(name)));
  const connector = parsed('setup', 'connector') as { topicPrefix: string; slotName: string; kafkaBrokers: string[] };
  const consumers = (['seat-availability', 'confirmation-email', 'sales-ledger'] as const).map(
    (name) =>
      [
        name,
        parsed(name, `consumer:${name}`) as { topicPrefix: string; kafkaBrokers: string[]; registryUrl: string },
      ] as const,
  );
  const registryUrl = `http://registry:${Number(String(service('registry').ports?.[0]).split(':').at(-1))}/apis/ccompat/v7`;

  it("the consumers read the topics the connector writes, from the broker's internal listener", () => {
    const internal = /INTERNAL:\/\/([^,]+)/.exec(serviceEnv(service('kafka')).KAFKA_ADVERTISED_LISTENERS ?? '')?.[1];
    expect(connector.kafkaBrokers).toEqual([internal]);
    for (const [name, config] of consumers) {
      expect(config.topicPrefix, name).toBe(connector.topicPrefix);
      expect(config.kafkaBrokers, name).toEqual([internal]);
    }
  });

  it('the slot monitor requires the slot the connector owns', () => {
    const monitor = parseSettings(slotMonitorSettings, serviceEnv(service('slot-monitor')));
    expect(monitor.slots).toEqual([connector.slotName]);
  });

  it("every program that writes or reads Avro uses the registry service's Confluent-compatible API, with one subject prefix", () => {
    for (const [name, config] of consumers) expect(config.registryUrl, name).toBe(registryUrl);
    const sweeper = parsed('hold-sweeper', 'hold-sweeper') as { registryUrl: string; subjectPrefix: string };
    const crowdService = parseSettings(seatServiceSettings, serviceEnv(service('crowd')));
    expect(sweeper.registryUrl).toBe(registryUrl);
    expect(crowdService.registryUrl).toBe(registryUrl);
    expect(sweeper.subjectPrefix).toBe(crowdService.subjectPrefix);
  });
});

describe('the file keeps its promises to the tests that read it as text', () => {
  it('keeps each image on one `image: name:tag` line (test/stack/versions-agree.test.ts reads them so)', () => {
    for (const [, s] of services)
      expect(composeText()).toMatch(
        new RegExp(`^\\s+image: ${(s.image ?? '').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm'),
      );
  });
});
