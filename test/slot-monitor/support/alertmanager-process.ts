/**
 * A real Alertmanager (Debian's prometheus-alertmanager) for one test file, on a free port, with
 * short grouping times and webhook receivers (people's alerts, the Watchdog's dead man's switch)
 * pointing at the test.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '../../../lib/wait.js';
import { alertmanagerArgs, alertmanagerBinary, alertmanagerConfig } from '../../../stack/alertmanager.js';

export interface AlertmanagerProcess {
  url: string;
  /** GET /api/v2/alerts (active, not silenced or inhibited). */
  activeAlerts(): Promise<{ labels: Record<string, string>; endsAt: string; status: { state: string } }[]>;
  close(): Promise<void>;
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const GROUP_WAIT_MS = 100;

/** Where the test's Alertmanager notifies: people's alerts to one URL, Watchdog heartbeats to the dead man's switch URL. */
export interface NotificationUrls {
  alertmanagerUrl: string;
  deadMansSwitchUrl: string;
}

/** The dead man's switch hears every Watchdog again this often (a second apart, so a test sees repeats). */
const DEAD_MANS_SWITCH_REPEAT = '1s';

export async function startAlertmanager(urls: NotificationUrls): Promise<AlertmanagerProcess> {
  const binary = alertmanagerBinary();
  if (!binary) throw new Error('Alertmanager is not installed: sudo apt-get install prometheus-alertmanager');
  const dir = mkdtempSync(join(tmpdir(), 'slot-monitor-am-'));
  const configFile = join(dir, 'alertmanager.yml');
  writeFileSync(
    configFile,
    alertmanagerConfig({
      webhookUrl: urls.alertmanagerUrl,
      deadMansSwitchUrl: urls.deadMansSwitchUrl,
      groupWait: `${GROUP_WAIT_MS}ms`,
      groupInterval: '1s',
      repeatInterval: '1h',
      deadMansSwitchRepeat: DEAD_MANS_SWITCH_REPEAT,
    }),
  );
  const port = await freePort();
  const child = spawn(binary, alertmanagerArgs({ configFile, storagePath: join(dir, 'data'), port }), {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let output = '';
  child.stderr.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const close = async () => {
    child.kill('SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitFor(async () => child.exitCode === null && (await fetch(`${url}/-/ready`)).ok, {
      timeoutMs: 20_000,
      intervalMs: 100,
      description: `Alertmanager on ${port} to be ready (output so far: ${output})`,
    });
  } catch (err) {
    await close();
    throw new Error(`Alertmanager did not start: ${output}`, { cause: err });
  }
  return {
    url,
    activeAlerts: async () => {
      const response = await fetch(`${url}/api/v2/alerts?active=true&silenced=false&inhibited=false`);
      return (await response.json()) as Awaited<ReturnType<AlertmanagerProcess['activeAlerts']>>;
    },
    close,
  };
}
