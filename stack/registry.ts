import { dirname, join } from 'node:path';
import { distPaths } from './artifacts.js';
import type { Component } from './component.js';
import { httpGet, ownedPid } from './component.js';
import type { StackLayout } from './config.js';
import { jvmPidFile, launchJvm, stopJvm } from './jvm.js';
import { registryJavaCommand } from './prerequisites.js';

/** Apicurio Registry (Quarkus app, in-memory storage) serving the Confluent-compatible API. */
export function registryComponent(layout: StackLayout): Component {
  const s = layout.settings;
  const pidFile = jvmPidFile(layout, 'registry');
  const jar = distPaths(layout).registryApp;
  return {
    name: 'registry',
    port: s.registryPort,
    logFile: join(layout.logDir, 'registry.log'),
    dependsOn: [],
    pid: () => ownedPid(pidFile, layout.home),
    async healthy() {
      return (await httpGet(`http://127.0.0.1:${s.registryPort}/apis/ccompat/v7/subjects`)) !== undefined;
    },
    async launch() {
      launchJvm(layout, {
        name: 'registry',
        heapMb: s.registryHeapMb,
        jar,
        java: registryJavaCommand(),
        cwd: dirname(jar),
        args: [],
        systemProperties: {
          'quarkus.http.host': '127.0.0.1',
          'quarkus.http.port': String(s.registryPort),
          'quarkus.management.host': '127.0.0.1',
          'quarkus.management.port': String(s.registryManagementPort),
          'quarkus.log.console.json': 'false',
        },
      });
    },
    stop: () => stopJvm(ownedPid(pidFile, layout.home)),
  };
}
