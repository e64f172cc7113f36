import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createSchemaRegistry, registerAvroSchema } from '../../lib/schema-registry.js';
import { projectRoot, stackEndpoints, stackLayout, stackSettings } from '../../stack/config.js';
import { stackStatus, type ComponentStatus } from '../../stack/launcher.js';
import { postgresHome } from '../../stack/postgres.js';
import { isAlive, portOpen } from '../../stack/processes.js';
import { waitFor } from '../../lib/wait.js';
import { requireStack } from '../support/stack.js';

requireStack();

/**
 * A second, throw-away stack (own home, every port moved by 100, the downloads shared) so that
 * stopping and killing never disturbs the stack the other tests use. Driven through the CLI.
 */
const mainLayout = stackLayout();
const env: NodeJS.ProcessEnv = { ...process.env, STACK_HOME: join(mainLayout.home, 'lifecycle-test'), STACK_DIST: mainLayout.dist };
for (const setting of Object.values(stackSettings.settings)) {
  if (setting.env.endsWith('_PORT')) env[setting.env] = String(Number(setting.default) + 100);
}
const layout = stackLayout(env);

function stackCommand(command: 'start' | 'stop'): void {
  const result = spawnSync('npx', ['tsx', 'stack/cli.ts', command], { cwd: projectRoot, env, encoding: 'utf8', timeout: 400_000 });
  if (result.status !== 0) throw new Error(`stack ${command} exited ${result.status}:\n${result.stdout}\n${result.stderr}`.slice(-4000));
}

const pids = (rows: ComponentStatus[]) => Object.fromEntries(rows.map((r) => [r.name, r.pid]));

describe('native stack lifecycle (a second stack on other ports)', () => {
  afterAll(() => {
    stackCommand('stop');
    rmSync(layout.home, { recursive: true, force: true });
    rmSync(dirname(postgresHome(layout)), { recursive: true, force: true });
  }, 300_000);

  it('starts from nothing; start again reuses every process; a component killed by hand comes back alone', async () => {
    stackCommand('start');
    const first = await stackStatus(layout);
    expect(first.filter((c) => !c.healthy).map((c) => c.name)).toEqual([]);

    stackCommand('start');
    expect(pids(await stackStatus(layout))).toEqual(pids(first));

    const registryUrl = stackEndpoints(layout).registryUrl;
    const schemaId = await registerAvroSchema(createSchemaRegistry(registryUrl), 'lifecycle.Probe', JSON.stringify({ type: 'record', name: 'Probe', fields: [{ name: 'n', type: 'int' }] }));
    const registry = first.find((c) => c.name === 'registry');
    process.kill(registry?.pid ?? -1, 'SIGKILL');
    await waitFor(() => !isAlive(registry?.pid), { timeoutMs: 10_000, description: 'the killed registry to be gone' });
    stackCommand('start');
    const after = await stackStatus(layout);
    expect(after.filter((c) => !c.healthy).map((c) => c.name)).toEqual([]);
    // Schema ids are inside every event on Kafka: they must survive a registry restart.
    expect(await createSchemaRegistry(registryUrl).client.getSchema(schemaId)).toBeDefined();
    for (const component of after) {
      if (component.name === 'registry') expect(component.pid).not.toBe(registry?.pid);
      else expect(component.pid).toBe(pids(first)[component.name]);
    }
  }, 400_000);

  it('stop leaves no process of the stack and no port held; start after stop works', async () => {
    const running = await stackStatus(layout);
    stackCommand('stop');
    for (const component of running) {
      expect(isAlive(component.pid), `${component.name} process`).toBe(false);
      expect(await portOpen(component.port), `${component.name} port ${component.port}`).toBe(false);
    }
    stackCommand('start');
    expect((await stackStatus(layout)).filter((c) => !c.healthy).map((c) => c.name)).toEqual([]);
  }, 400_000);
});
