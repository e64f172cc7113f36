/**
 * The stack's own primary + standby (STACK_POSTGRES_STANDBY=yes), made by the launcher's components
 * in a home of this test (own folder, own free ports, the shared dist folder for the Postgres 17
 * binaries), so a test may kill the primary with -9 and fail over without touching the shared stack.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor } from '../../../lib/wait.js';
import { ensurePostgresBinaries } from '../../../stack/artifacts.js';
import { stackLayout, type StackLayout } from '../../../stack/config.js';
import { postgresComponent, postgresHome } from '../../../stack/postgres.js';
import { adminUrl, postgresStandbyComponent, standbyHome } from '../../../stack/postgres-standby.js';
import { isAlive } from '../../../stack/processes.js';
import { freePort } from '../../slot-monitor/support/alertmanager-process.js';
import { track } from '../../support/leak-guard.js';
import { testLogger } from '../../support/seat-pipeline.js';
import { adminQuery, uniqueName } from '../../support/stack.js';

export interface SynchronizedPair {
  layout: StackLayout;
  primaryPort: number;
  standbyPort: number;
  /** kill -9 of the primary's postmaster; resolves once it no longer answers. */
  killPrimary(): Promise<void>;
  remove(): Promise<void>;
}

const waitUntil = (description: string, check: () => Promise<boolean>) =>
  waitFor(check, { timeoutMs: 90_000, intervalMs: 200, description });

export async function startSynchronizedPair(prefix: string): Promise<SynchronizedPair> {
  const shared = stackLayout();
  const home = join(shared.home, 'failover-test', uniqueName(prefix).toLowerCase());
  const [primaryPort, standbyPort] = [await freePort(), await freePort()];
  const layout = stackLayout({
    ...process.env,
    STACK_HOME: home,
    STACK_DIST: shared.dist,
    STACK_POSTGRES_PORT: String(primaryPort),
    STACK_POSTGRES_STANDBY: 'yes',
    STACK_POSTGRES_STANDBY_PORT: String(standbyPort),
    STACK_POSTGRES_BINARIES: 'auto',
  });
  const primary = postgresComponent(layout);
  const standby = postgresStandbyComponent(layout);
  const remove = track(`synchronized pair ${home}`, async () => {
    for (const component of [standby, primary]) await component.stop().catch(() => undefined);
    for (const folder of [standbyHome(layout), postgresHome(layout), home])
      rmSync(folder, { recursive: true, force: true });
  });
  try {
    await ensurePostgresBinaries(layout, testLogger);
    await primary.launch();
    await waitUntil(`the primary on ${primaryPort}`, () => primary.healthy());
    await standby.launch();
    await waitUntil(`the standby on ${standbyPort}`, () => standby.healthy());
    await waitUntil('the standby to stream from the primary', async () => {
      const { rows } = await adminQuery(adminUrl(standbyPort), /* sql */ `select status from pg_stat_wal_receiver`);
      return (rows[0] as { status?: string } | undefined)?.status === 'streaming';
    });
  } catch (error) {
    await remove();
    throw error;
  }
  return {
    layout,
    primaryPort,
    standbyPort,
    async killPrimary() {
      const pid = primary.pid();
      if (pid === undefined) throw new Error('the primary is not running');
      process.kill(pid, 'SIGKILL');
      await waitUntil('the killed primary to stop answering', async () => !(await primary.healthy()));
      await waitUntil('the killed postmaster to be gone', async () => !isAlive(pid));
    },
    remove,
  };
}
