/**
 * A real Prometheus (Debian's package) for one test file: its own config and data folder in a
 * temporary directory, on a free loopback port, stopped and removed by close().
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '../../../lib/wait.js';
import { PROMETHEUS_ENV, prometheusArgs, prometheusBinary } from '../../../stack/prometheus.js';
import { freePort } from '../../slot-monitor/support/alertmanager-process.js';
import { track } from '../../support/leak-guard.js';

export interface PrometheusProcess {
  url: string;
  /** Writes a file next to the config (rules), returning its path. */
  dir: string;
  close(): Promise<void>;
}

export async function startPrometheus(writeConfig: (dir: string) => string): Promise<PrometheusProcess> {
  if (!prometheusBinary()) throw new Error('Prometheus is not installed: sudo apt-get install prometheus');
  const dir = mkdtempSync(join(tmpdir(), 'prometheus-test-'));
  const configFile = join(dir, 'prometheus.yml');
  writeFileSync(configFile, writeConfig(dir));
  const port = await freePort();
  const child = spawn('prometheus', prometheusArgs({ configFile, dataDir: join(dir, 'data'), port }), {
    env: PROMETHEUS_ENV,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let output = '';
  child.stderr.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const close = track(`prometheus (pid ${child.pid})`, async () => {
    child.kill('SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  });
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitFor(async () => child.exitCode === null && (await fetch(`${url}/-/ready`)).ok, {
      timeoutMs: 30_000,
      intervalMs: 100,
      description: `Prometheus on ${port} to be ready (output so far: ${output})`,
    });
  } catch (err) {
    await close();
    throw new Error(`Prometheus did not start: ${output}`, { cause: err });
  }
  return { url, dir, close };
}
