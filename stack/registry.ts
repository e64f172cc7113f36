import { dirname, join } from 'node:path';
import { distPaths } from './artifacts.js';
import type { Component } from './component.js';
import { httpGet, ownedPid } from './component.js';
import { stackEndpoints, type StackLayout } from './config.js';
import { ensureDatabase } from '../lib/postgres.js';
import { commandLine } from './processes.js';
import { jvmPidFile, launchJvm, stopJvm } from './jvm.js';
import { restrictConnect } from './postgres.js';
import { registryJavaCommand } from './prerequisites.js';

export const REGISTRY_DATABASE = 'stagefront_registry';

/**
 * The registry's database login, in its environment (Quarkus reads apicurio.datasource.username and
 * .password from these names, as docker compose sets them): a system property would put the password
 * on the JVM's command line, which every local user can read.
 */
const REGISTRY_DATABASE_CREDENTIALS = {
  APICURIO_DATASOURCE_USERNAME: 'postgres',
  APICURIO_DATASOURCE_PASSWORD: 'postgres',
} as const;

/**
 * Apicurio Registry (Quarkus app) serving the Confluent-compatible API, storing its schemas in the
 * stack's Postgres: schema ids are in every event on Kafka, so they must survive a registry restart.
 */
export function registryComponent(layout: StackLayout): Component {
  const s = layout.settings;
  const pidFile = jvmPidFile(layout, 'registry');
  const jar = distPaths(layout).registryApp;
  return {
    name: 'registry',
    port: s.registryPort,
    logFile: join(layout.logDir, 'registry.log'),
    // With a standby, its storage is reached through the primary endpoint (it follows a failover).
    dependsOn: s.postgresStandby ? ['postgres', 'postgres-endpoint'] : ['postgres'],
    pid: () => ownedPid(pidFile, layout.home),
    async healthy() {
      return (await httpGet(`http://127.0.0.1:${s.registryPort}/apis/ccompat/v7/subjects`)) !== undefined;
    },
    async launch() {
      await ensureDatabase(stackEndpoints(layout).postgresAdminUrl, REGISTRY_DATABASE);
      await restrictConnect(stackEndpoints(layout).postgresAdminUrl);
      launchJvm(layout, {
        name: 'registry',
        heapMb: s.registryHeapMb,
        jar,
        java: registryJavaCommand(),
        cwd: dirname(jar),
        args: [],
        // Clients fetch each schema once and keep it: its start matters, its peak throughput does not.
        quickCompilerOnly: true,
        systemProperties: {
          'quarkus.http.host': '127.0.0.1',
          'quarkus.http.port': String(s.registryPort),
          'quarkus.management.host': '127.0.0.1',
          'quarkus.management.port': String(s.registryManagementPort),
          'quarkus.log.console.json': 'false',
          'apicurio.storage.kind': 'sql',
          'apicurio.storage.sql.kind': 'postgresql',
          'apicurio.datasource.url': `jdbc:postgresql://127.0.0.1:${stackEndpoints(layout).postgresPort}/${REGISTRY_DATABASE}`,
          'apicurio.datasource.jdbc.initial-size': '2',
          'apicurio.datasource.jdbc.min-size': '2',
          'apicurio.datasource.jdbc.max-size': '10',
        },
        env: REGISTRY_DATABASE_CREDENTIALS,
      });
    },
    stop: () => stopJvm(ownedPid(pidFile, layout.home)),
    // A registry an older launcher started has its database password on its command line.
    outdated: () => commandLine(ownedPid(pidFile, layout.home)).includes('-Dapicurio.datasource.password='),
  };
}
