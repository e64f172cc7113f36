/**
 * Kafka Connect's REST API requires credentials, checked on a Connect cluster of two workers of a
 * test file's own, started by the launcher's own component (the stack's workers get the same
 * properties and files): they refuse a request without credentials or with a wrong password; the
 * connector command and slot recovery work with the local stack's user and fail with wrong
 * credentials with the error that names CONNECT_USERNAME and CONNECT_PASSWORD; a configuration
 * change sent to either worker (one of them a follower, which forwards it to the leader) is taken.
 * Registered by test/connectors/connect-cluster-drill.test.ts on its cluster, before its kill drill:
 * no JVMs of their own.
 */
import { readFileSync, statSync } from 'node:fs';
import { expect, it } from 'vitest';
import { basicAuthorization, connectorStatus, isRunning } from '../../../connectors/connect-client.js';
import { liveConnectorConfig } from '../../../connectors/connector-lifecycle.js';
import { waitFor } from '../../../lib/wait.js';
import { LOCAL_CONNECT_ENV, LOCAL_CONNECT_USER, localConnectApi, stackLayout } from '../../../stack/config.js';
import { REST_AUTH_EXTENSION_CLASS, restAuthFiles } from '../../../stack/connect.js';
import { runChildProgram } from '../../consumers/helpers/child-consumer.js';
import type { ConnectWorkerCluster } from '../../support/connect-worker.js';
import type { SeatPipeline } from '../../support/seat-pipeline.js';

const WRONG_PASSWORD = 'not-the-password-4711';
const RIGHT = basicAuthorization(LOCAL_CONNECT_USER.username, LOCAL_CONNECT_USER.password);

const get = (url: string, authorization?: string) =>
  fetch(`${url}/connectors`, {
    headers: authorization === undefined ? {} : { authorization },
    signal: AbortSignal.timeout(10_000),
  });

/** The cases, on `connect()`'s two workers, whose outbox connector `pipeline()` applied. */
export function restAuthCases(connect: () => ConnectWorkerCluster, pipeline: () => SeatPipeline): void {
  it('every worker refuses a request without credentials, with a wrong password or an unknown user (401), and takes the right ones', async () => {
    for (const worker of connect().workers) {
      expect((await get(worker.url)).status, worker.url).toBe(401);
      expect(
        (await get(worker.url, basicAuthorization(LOCAL_CONNECT_USER.username, WRONG_PASSWORD))).status,
        worker.url,
      ).toBe(401);
      expect(
        (await get(worker.url, basicAuthorization('somebody-else', LOCAL_CONNECT_USER.password))).status,
        worker.url,
      ).toBe(401);
      expect((await get(worker.url, RIGHT)).status, worker.url).toBe(200);
    }
  });

  it('each worker runs the extension with its users and JAAS files owner-only (0600); the password is in neither its command line nor its log', () => {
    for (const worker of connect().workers) {
      const layout = stackLayout({ ...process.env, STACK_HOME: worker.home });
      const files = restAuthFiles(layout);
      for (const file of [files.users, files.jaas])
        expect({ file, mode: (statSync(file).mode & 0o777).toString(8) }).toEqual({ file, mode: '600' });
      expect(readFileSync(files.jaas, 'utf8')).toContain(`file="${files.users}"`);
      const pid = worker.pid();
      if (pid === undefined) throw new Error(`worker ${worker.url} is not running`);
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
      expect(cmdline).toContain(`-Djava.security.auth.login.config=${files.jaas}`);
      expect(cmdline).not.toContain(LOCAL_CONNECT_USER.password);
      // The worker's configuration as it logs it at start: the extension is on.
      const log = readFileSync(worker.logFile, 'utf8');
      expect(log).toContain(`rest.extension.classes = [${REST_AUTH_EXTENSION_CLASS}]`);
      expect(log).not.toContain(LOCAL_CONNECT_USER.password);
    }
  });

  it('a configuration change sent to either worker is taken: a follower forwards it to the leader with the credentials', async () => {
    const { connectorName } = pipeline().connector;
    for (const [i, worker] of connect().workers.entries()) {
      const api = localConnectApi(worker.url);
      const config = await liveConnectorConfig(api, connectorName);
      const heartbeat = String(2000 + 100 * (i + 1));
      const response = await fetch(`${worker.url}/connectors/${encodeURIComponent(connectorName)}/config`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json', authorization: RIGHT },
        body: JSON.stringify({ ...config, 'heartbeat.interval.ms': heartbeat }),
      });
      expect(response.status, `${worker.url}: ${await response.text()}`).toBe(200);
      // Every worker reads the change from the config topic; the task is restarted with it.
      for (const other of connect().workers) {
        await waitFor(
          async () =>
            (await liveConnectorConfig(localConnectApi(other.url), connectorName))['heartbeat.interval.ms'] ===
            heartbeat,
          {
            timeoutMs: 30_000,
            description: `${other.url} to show heartbeat.interval.ms=${heartbeat}`,
          },
        );
      }
      await waitFor(
        async () => {
          const tasks = (await (
            await fetch(`${worker.url}/connectors/${encodeURIComponent(connectorName)}/tasks`, {
              headers: { authorization: RIGHT },
            })
          ).json()) as { config: Record<string, string> }[];
          return tasks[0]?.config['heartbeat.interval.ms'] === heartbeat;
        },
        { timeoutMs: 60_000, description: `the task configuration to carry heartbeat.interval.ms=${heartbeat}` },
      );
    }
    await waitFor(async () => isRunning(await connectorStatus(localConnectApi(connect().connectUrl), connectorName)), {
      timeoutMs: 60_000,
      description: `connector ${connectorName} RUNNING after the changes`,
    });
  });

  const connectorEnv = (overrides: Record<string, string> = {}) => ({
    CONNECT_URL: connect().connectUrl,
    ...LOCAL_CONNECT_ENV,
    CONNECTOR_NAME: pipeline().connector.connectorName,
    SLOT_NAME: pipeline().connector.slotName,
    CONNECTOR_SEAT_DB_URL: pipeline().adminUrl,
    LOG_LEVEL: 'warn',
    ...overrides,
  });
  const recoveryEnv = (overrides: Record<string, string> = {}) => ({
    CONNECT_URL: connect().connectUrl,
    ...LOCAL_CONNECT_ENV,
    CONNECTOR_NAME: pipeline().connector.connectorName,
    SLOT_RECOVERY_SEAT_DB_URL: pipeline().adminUrl,
    RECONCILE_CONSUMER_DB_URL: pipeline().adminUrl,
    LOG_LEVEL: 'warn',
    ...overrides,
  });
  const since = ['--since', '2026-12-01T00:00:00Z'];

  /** The 401 error: names both settings and the fix, shows no password. */
  function expectUnauthorized(run: { code: number | null; output: string }): void {
    expect(run.code, run.output).toBe(1);
    expect(run.output).toContain('refused the credentials (HTTP 401)');
    expect(run.output).toContain('CONNECT_USERNAME and CONNECT_PASSWORD');
    expect(run.output).not.toContain(WRONG_PASSWORD);
    expect(run.output).not.toContain(LOCAL_CONNECT_USER.password);
  }

  it('the connector command works with the right credentials and fails with wrong ones with the error that names the settings', async () => {
    const right = await runChildProgram('connectors/cli.ts', connectorEnv(), ['status']);
    expect(right.code, right.output).toBe(0);
    expectUnauthorized(
      await runChildProgram('connectors/cli.ts', connectorEnv({ CONNECT_PASSWORD: WRONG_PASSWORD }), ['status']),
    );
    expectUnauthorized(
      await runChildProgram('connectors/cli.ts', connectorEnv({ CONNECT_USERNAME: 'somebody-else' }), ['apply']),
    );
  });

  it('slot recovery works with the right credentials and fails with wrong ones with the error that names the settings', async () => {
    const right = await runChildProgram('monitors/slot-recovery/main.ts', recoveryEnv(), since);
    expect(right.code, right.output).toBe(0);
    expectUnauthorized(
      await runChildProgram('monitors/slot-recovery/main.ts', recoveryEnv({ CONNECT_PASSWORD: WRONG_PASSWORD }), since),
    );
  });
}
