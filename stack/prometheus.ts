import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Component } from './component.js';
import { httpGet, ownedPid } from './component.js';
import { projectRoot, type StackLayout } from './config.js';
import { SCRAPE_PORTS, prometheusConfig } from './prometheus-config.js';
import { clearStaleTargets, prometheusFiles, scrapeTargetsDir } from './scrape-targets.js';
import { spawnDetached, stopProcess } from './processes.js';

const RULES_GLOB = join(projectRoot, 'monitors', 'prometheus', '*.rules.yml');

export function prometheusBinary(): string | undefined {
  return spawnSync('prometheus', ['--version'], { encoding: 'utf8' }).status === 0 ? 'prometheus' : undefined;
}

/** Command-line arguments of a Prometheus on loopback with its own data folder. */
export function prometheusArgs(opts: { configFile: string; dataDir: string; port: number }): string[] {
  return [
    `--config.file=${opts.configFile}`,
    `--storage.tsdb.path=${opts.dataDir}`,
    `--web.listen-address=127.0.0.1:${opts.port}`,
    '--storage.tsdb.retention.time=7d',
    '--log.level=warn',
  ];
}

/** GOMAXPROCS=1: the stack shares a small machine; one core is plenty for a handful of targets. */
export const PROMETHEUS_ENV = { ...process.env, GOMAXPROCS: '1' };

/**
 * Prometheus from Debian's prometheus package: scrapes the monitors and consumers on their default
 * metrics ports and wherever a program beside the stack announces itself (stack/scrape-targets.ts), evaluates every rules file in monitors/prometheus/, sends alerts to the stack's Alertmanager.
 */
export function prometheusComponent(layout: StackLayout): Component {
  const port = layout.settings.prometheusPort;
  const home = join(layout.home, 'prometheus');
  const { pidFile, configFile } = prometheusFiles(layout.home);
  const interval = `${layout.settings.prometheusIntervalMs}ms`;
  return {
    name: 'prometheus',
    port,
    logFile: join(layout.logDir, 'prometheus.log'),
    dependsOn: ['alertmanager'],
    pid: () => ownedPid(pidFile, configFile),
    healthy: async () => (await httpGet(`http://127.0.0.1:${port}/-/ready`)) !== undefined,
    async launch() {
      if (!prometheusBinary())
        throw new Error('Prometheus not found; install it with: sudo apt-get install prometheus');
      mkdirSync(join(home, 'data'), { recursive: true });
      const targetsDir = scrapeTargetsDir(layout.home);
      for (const job of Object.keys(SCRAPE_PORTS)) {
        mkdirSync(join(targetsDir, job), { recursive: true });
        clearStaleTargets(join(targetsDir, job)); // what programs killed since the last launch left
      }
      const alertmanager = `127.0.0.1:${layout.settings.alertmanagerPort}`;
      writeFileSync(
        configFile,
        prometheusConfig({
          targetHost: '127.0.0.1',
          alertmanager,
          ruleFiles: [RULES_GLOB],
          scrapeInterval: interval,
          evaluationInterval: interval,
          targetsDir,
        }),
      );
      spawnDetached({
        command: 'prometheus',
        args: prometheusArgs({ configFile, dataDir: join(home, 'data'), port }),
        logFile: join(layout.logDir, 'prometheus.log'),
        pidFile,
        env: PROMETHEUS_ENV,
      });
    },
    async stop() {
      const pid = ownedPid(pidFile, configFile);
      if (pid !== undefined) await stopProcess(pid, 10_000);
    },
  };
}
