import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Component } from './component.js';
import { httpGet, ownedPid } from './component.js';
import type { StackLayout } from './config.js';
import { spawnDetached, stopProcess } from './processes.js';

/** Debian names the binary prometheus-alertmanager; upstream tarballs call it alertmanager. */
const BINARIES = ['prometheus-alertmanager', 'alertmanager'];

export function alertmanagerBinary(): string | undefined {
  return BINARIES.find((binary) => spawnSync(binary, ['--version'], { encoding: 'utf8' }).status === 0);
}

export interface AlertmanagerConfigOptions {
  /** Where notifications go (a webhook receiver, send_resolved on); none: a receiver that drops them. */
  webhookUrl?: string;
  /** Where the Watchdog heartbeats go (a dead man's switch that pages when they stop); none: dropped. */
  deadMansSwitchUrl?: string;
  groupWait?: string;
  groupInterval?: string;
  repeatInterval?: string;
  /** How often the dead man's switch hears each Watchdog again (it pages when a ping is missing). */
  deadMansSwitchRepeat?: string;
}

/** The receiver and route of every monitor's Watchdog heartbeat. */
export const DEAD_MANS_SWITCH = 'deadmansswitch';
const DEAD_MANS_SWITCH_REPEAT = '1m';

/**
 * alertmanager.yml, written as JSON (which is YAML). Every label set is its own group
 * (`group_by: ['...']`), so each alert is notified on its own, once, and again when it resolves.
 * The Watchdog heartbeats (one per monitor) take their own route to a dead man's switch: pinged
 * again every minute rather than every 4 h, never sent to the people's receiver, and never sent
 * "resolved" (a dead man's switch counts any request as a sign of life).
 */
export function alertmanagerConfig(options: AlertmanagerConfigOptions = {}): string {
  const receiver = options.webhookUrl
    ? { name: 'webhook', webhook_configs: [{ url: options.webhookUrl, send_resolved: true }] }
    : { name: 'webhook' };
  const deadMansSwitch = options.deadMansSwitchUrl
    ? { name: DEAD_MANS_SWITCH, webhook_configs: [{ url: options.deadMansSwitchUrl, send_resolved: false }] }
    : { name: DEAD_MANS_SWITCH };
  const repeat = options.deadMansSwitchRepeat ?? DEAD_MANS_SWITCH_REPEAT;
  const config = {
    route: {
      receiver: 'webhook',
      group_by: ['...'],
      group_wait: options.groupWait ?? '10s',
      group_interval: options.groupInterval ?? '1m',
      repeat_interval: options.repeatInterval ?? '4h',
      routes: [
        {
          receiver: DEAD_MANS_SWITCH,
          matchers: ['alertname="Watchdog"'],
          group_by: ['...'],
          group_wait: '0s',
          group_interval: repeat,
          repeat_interval: repeat,
        },
      ],
    },
    receivers: [receiver, deadMansSwitch],
  };
  return `${JSON.stringify(config, null, 2)}\n`;
}

/** Command-line arguments of a single (non-clustered) Alertmanager on loopback. */
export function alertmanagerArgs(opts: { configFile: string; storagePath: string; port: number }): string[] {
  return [
    `--config.file=${opts.configFile}`,
    `--storage.path=${opts.storagePath}`,
    `--web.listen-address=127.0.0.1:${opts.port}`,
    // An empty cluster address turns off the gossip listener (9094), which a single instance does not need.
    '--cluster.listen-address=',
    '--log.level=warn',
  ];
}

/** Alertmanager from Debian's prometheus-alertmanager package: receives the slot monitor's alerts. */
export function alertmanagerComponent(layout: StackLayout): Component {
  const port = layout.settings.alertmanagerPort;
  const home = join(layout.home, 'alertmanager');
  const pidFile = join(layout.runDir, 'alertmanager.pid');
  const configFile = join(home, 'alertmanager.yml');
  return {
    name: 'alertmanager',
    port,
    logFile: join(layout.logDir, 'alertmanager.log'),
    dependsOn: [],
    pid: () => ownedPid(pidFile, configFile),
    healthy: async () => (await httpGet(`http://127.0.0.1:${port}/-/ready`)) !== undefined,
    async launch() {
      const binary = alertmanagerBinary();
      if (!binary)
        throw new Error('Alertmanager not found; install it with: sudo apt-get install prometheus-alertmanager');
      mkdirSync(join(home, 'data'), { recursive: true });
      const { alertmanagerWebhookUrl: webhookUrl, alertmanagerDeadMansSwitchUrl: deadMansSwitchUrl } = layout.settings;
      writeFileSync(
        configFile,
        alertmanagerConfig({
          ...(webhookUrl === '' ? {} : { webhookUrl }),
          ...(deadMansSwitchUrl === '' ? {} : { deadMansSwitchUrl }),
        }),
      );
      spawnDetached({
        command: binary,
        args: alertmanagerArgs({ configFile, storagePath: join(home, 'data'), port }),
        logFile: join(layout.logDir, 'alertmanager.log'),
        pidFile,
      });
    },
    async stop() {
      const pid = ownedPid(pidFile, configFile);
      if (pid !== undefined) await stopProcess(pid, 5_000);
    },
  };
}
