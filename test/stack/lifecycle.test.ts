import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createSchemaRegistry,
  decodeWithSchema,
  encodeWithSchema,
  registerAvroSchema,
} from '../../lib/schema-registry.js';
import { jvmArchiveDir } from '../../stack/class-data-sharing.js';
import { projectRoot, stackEndpoints, stackLayout, stackSettings } from '../../stack/config.js';
import { stackComponents, stackStatus, type ComponentStatus } from '../../stack/launcher.js';
import { postgresHome } from '../../stack/postgres.js';
import { isAlive, portOpen } from '../../stack/processes.js';
import { waitFor } from '../../lib/wait.js';
import { freePort } from '../slot-monitor/support/alertmanager-process.js';
import { requireStack } from '../support/stack.js';

requireStack();

/**
 * A second, throw-away stack (own home, every port a free one, the downloads shared) so that
 * stopping and killing never disturbs the stack the other tests use. Driven through the CLI.
 */
const mainLayout = stackLayout();
const env: NodeJS.ProcessEnv = {
  ...process.env,
  STACK_HOME: join(mainLayout.home, 'lifecycle-test'),
  STACK_DIST: mainLayout.dist,
};
for (const setting of Object.values(stackSettings.settings)) {
  if (setting.env.endsWith('_PORT')) env[setting.env] = String(await freePort());
}
const layout = stackLayout(env);

function removeStackFolders(): void {
  rmSync(layout.home, { recursive: true, force: true });
  rmSync(dirname(postgresHome(layout)), { recursive: true, force: true });
}

function stackCommand(command: 'start' | 'stop'): void {
  const result = spawnSync('npx', ['tsx', 'stack/cli.ts', command], {
    cwd: projectRoot,
    env,
    encoding: 'utf8',
    timeout: 400_000,
  });
  if (result.status !== 0)
    throw new Error(`stack ${command} exited ${result.status}:\n${result.stdout}\n${result.stderr}`.slice(-4000));
}

const pids = (rows: ComponentStatus[]) => Object.fromEntries(rows.map((r) => [r.name, r.pid]));
const unhealthy = (rows: ComponentStatus[]) => rows.filter((c) => !c.healthy).map((c) => c.name);
/** Components that answer on their port although no process of this stack runs them (another one holds the port). */
const withoutProcess = (rows: ComponentStatus[]) => rows.filter((c) => c.pid === undefined).map((c) => c.name);

/** Starts the second stack (idempotent: what runs is reused) and returns its status. */
async function runningStack(): Promise<ComponentStatus[]> {
  stackCommand('start');
  return stackStatus(layout);
}

describe('native stack lifecycle (a second stack on other ports)', () => {
  // The fixture: the second stack started from nothing. Each test starts it again (a no-op when it
  // runs) so that it needs no other test, and leaves it running.
  let fromNothing: ComponentStatus[] = [];
  beforeAll(async () => {
    stackCommand('stop'); // what a crashed run may have left
    removeStackFolders();
    fromNothing = await runningStack();
  }, 400_000);

  afterAll(() => {
    stackCommand('stop');
    removeStackFolders();
  }, 300_000);

  it('starts from nothing, every component a process of its own, healthy, on ports the main stack does not use', () => {
    expect(unhealthy(fromNothing)).toEqual([]);
    expect(withoutProcess(fromNothing)).toEqual([]);
    const mainPorts = new Set(stackComponents(mainLayout).map((c) => c.port));
    expect(fromNothing.filter((c) => mainPorts.has(c.port)).map((c) => c.name)).toEqual([]);
  });

  it('start again reuses every process; a component killed by hand comes back alone, its data kept', async () => {
    const first = await runningStack();
    expect(unhealthy(first)).toEqual([]);
    expect(withoutProcess(first)).toEqual([]);
    stackCommand('start');
    expect(pids(await stackStatus(layout))).toEqual(pids(first));
    // On a stack that runs as configured, start looks for nothing it would need to launch one: with
    // node alone on the PATH (no Java, Maven, Postgres, Prometheus), it still reuses every process.
    const nodeOnly = mkdtempSync(join(tmpdir(), 'stack-node-only-'));
    try {
      symlinkSync(process.execPath, join(nodeOnly, 'node'));
      const bareStart = () =>
        spawnSync(process.execPath, ['--import', 'tsx', 'stack/cli.ts', 'start'], {
          cwd: projectRoot,
          env: { ...env, PATH: nodeOnly, STACK_INSTALL_MISSING: 'no' },
          encoding: 'utf8',
          timeout: 120_000,
        });
      // A second try only for a health check that timed out on a loaded machine (that component then
      // counts as not running, and start rightly looks for Java); a launcher that always looks fails both.
      let bare = bareStart();
      if (bare.status !== 0) bare = bareStart();
      expect(bare.status, `${bare.stdout}\n${bare.stderr}`.slice(-3000)).toBe(0);
    } finally {
      rmSync(nodeOnly, { recursive: true, force: true });
    }
    expect(pids(await stackStatus(layout))).toEqual(pids(first));

    const registryUrl = stackEndpoints(layout).registryUrl;
    const probe = createSchemaRegistry(registryUrl);
    const schemaId = await registerAvroSchema(
      probe,
      'lifecycle.Probe',
      JSON.stringify({ type: 'record', name: 'Probe', fields: [{ name: 'n', type: 'int' }] }),
    );
    const encoded = await encodeWithSchema(probe, schemaId, { n: 7 });
    const registry = first.find((c) => c.name === 'registry');
    process.kill(registry?.pid ?? -1, 'SIGKILL');
    await waitFor(() => !isAlive(registry?.pid), { timeoutMs: 10_000, description: 'the killed registry to be gone' });
    stackCommand('start');
    const after = await stackStatus(layout);
    expect(unhealthy(after)).toEqual([]);
    // Schema ids are inside every event on Kafka: a client that never saw the schema decodes after the restart.
    expect(await decodeWithSchema(createSchemaRegistry(registryUrl), encoded)).toEqual({ n: 7 });
    for (const component of after) {
      if (component.name === 'registry') expect(component.pid).not.toBe(registry?.pid);
      else expect(component.pid).toBe(pids(first)[component.name]);
    }
  }, 400_000);

  it('supervise starts a component killed with -9 again at once, alone; Ctrl-C stops the watching and leaves the stack running', async () => {
    const first = await runningStack();
    const supervise = spawn(process.execPath, ['--import', 'tsx', 'stack/cli.ts', 'supervise'], {
      cwd: projectRoot,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    supervise.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    supervise.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = once(supervise, 'exit') as Promise<[number | null, string | null]>;
    try {
      await waitFor(() => output.includes('supervising the stack'), {
        timeoutMs: 120_000,
        description: `stack supervise to start watching; its output:\n${output}`,
      });
      // Commands that would fight it are refused, naming it and the way out; the stack is untouched.
      const stop = spawnSync('npx', ['tsx', 'stack/cli.ts', 'stop'], { cwd: projectRoot, env, encoding: 'utf8' });
      expect(stop.status).toBe(1);
      expect(stop.stderr).toContain(`a supervisor keeps this stack running (pid ${supervise.pid}`);
      expect(pids(await stackStatus(layout))).toEqual(pids(first));

      const alertmanagerPid = first.find((c) => c.name === 'alertmanager')?.pid;
      expect(alertmanagerPid, 'the running Alertmanager').toBeGreaterThan(1);
      process.kill(alertmanagerPid!, 'SIGKILL');
      // Its own readiness endpoint, asked directly: a new process serves on the port.
      const ready = `http://127.0.0.1:${layout.settings.alertmanagerPort}/-/ready`;
      await waitFor(async () => (await fetch(ready).catch(() => undefined))?.ok === true, {
        timeoutMs: 60_000,
        description: 'Alertmanager to serve again without anyone running stack start',
      });
      const after = pids(await stackStatus(layout));
      expect(after.alertmanager).toBeDefined();
      expect(after.alertmanager).not.toBe(alertmanagerPid);
      expect(isAlive(after.alertmanager)).toBe(true);
      for (const component of first)
        if (component.name !== 'alertmanager') expect(after[component.name]).toBe(component.pid);
    } finally {
      supervise.kill('SIGINT');
    }
    expect((await exited)[0]).toBe(0);
    expect(output).toContain('no longer supervising; the stack keeps running');
    const left = await stackStatus(layout);
    expect(unhealthy(left)).toEqual([]);
  }, 400_000);

  it('stop leaves no process of the stack and no port held; start after stop works, each JVM mapping the classes it archived at the stop', async () => {
    const running = await runningStack();
    expect(unhealthy(running)).toEqual([]);
    expect(withoutProcess(running)).toEqual([]);
    stackCommand('stop');
    for (const component of running) {
      expect(isAlive(component.pid), `${component.name} process`).toBe(false);
      expect(await portOpen(component.port), `${component.name} port ${component.port}`).toBe(false);
    }
    const again = await runningStack();
    expect(unhealthy(again)).toEqual([]);
    // Each JVM archived its classes at the clean stop and maps that archive now: the kernel's map of
    // the process shows the file (class data sharing, stack/class-data-sharing.ts).
    const archives = jvmArchiveDir(layout);
    const jvms = again.filter((c) => ['kafka', 'connect', 'registry'].includes(c.name));
    expect(jvms.map((c) => c.name).sort()).toEqual(['connect', 'kafka', 'registry']);
    for (const jvm of jvms) {
      const mapped = readFileSync(`/proc/${jvm.pid}/maps`, 'utf8')
        .split('\n')
        .filter((line) => line.includes(archives));
      expect(mapped.length, `${jvm.name} maps an archive of ${archives}`).toBeGreaterThan(0);
    }
  }, 400_000);
});
