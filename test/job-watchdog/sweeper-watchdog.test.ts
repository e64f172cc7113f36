/**
 * The job watchdog against a real hold sweeper process, a real seat database and a real
 * Alertmanager: a sweeper killed with -9 makes JobRunOverdue fire, a new one resolves it; overdue
 * holds piling up alert and resolve once swept; runs past their deadline and failing runs alert; a
 * database the watchdog cannot connect to alerts and resolves. The sweeper's /healthz and /readyz
 * are checked on the way (ready only while it can claim its runs).
 * Each test has a seat database and a watchdog of its own.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../lib/logger.js';
import { sleep, waitFor } from '../../lib/wait.js';
import { parseJobWatchdogConfig } from '../../monitors/job-watchdog/settings.js';
import { startJobWatchdog, type RunningJobWatchdog } from '../../monitors/job-watchdog/start-watchdog.js';
import { startAlertmanager, type AlertmanagerProcess } from '../slot-monitor/support/alertmanager-process.js';
import { received, startWebhookReceiver, type WebhookReceiver } from '../slot-monitor/support/webhook-receiver.js';
import { installLeakGuard } from '../support/leak-guard.js';
import { requireStack } from '../support/stack.js';
import {
  createWatchedDatabase,
  startSweeperProcess,
  WATCHDOG_ROLE,
  type WatchedDatabase,
} from './support/watched-database.js';

requireStack();
installLeakGuard();

const SWEEP_INTERVAL_MS = 1000;
const TOLERANCE = 3;
const POLL_INTERVAL_MS = 500;

/** GET a path of the sweeper's metrics server: status and body. */
async function probe(sweeper: { metricsUrl: string }, path: string): Promise<{ status: number; body: string }> {
  const response = await fetch(sweeper.metricsUrl.replace(/\/metrics$/, path));
  return { status: response.status, body: await response.text() };
}

describe('job watchdog: hold sweeper runs, overdue holds, deadlines, failures', () => {
  let receiver: WebhookReceiver;
  let alertmanager: AlertmanagerProcess;
  const started: { database: WatchedDatabase; watchdog: RunningJobWatchdog }[] = [];
  const timings: Record<string, number> = {};

  /** Each test: a seat database of its own and a watchdog on it, whose alerts (labelled with that database) are the test's. */
  /** A watched database and a watchdog on it; `beforeWatching` runs in between (a sweeper that should already be running when the watchdog starts). */
  async function ownWatchdog(prefix: string, beforeWatching?: (database: WatchedDatabase) => Promise<void>) {
    const database = await createWatchedDatabase(prefix);
    await beforeWatching?.(database);
    const config = parseJobWatchdogConfig({
      JOB_WATCHDOG_DATABASE_URL: database.watchdogUrl,
      JOB_WATCHDOG_JOBS: `hold-sweeper=${SWEEP_INTERVAL_MS}:5000,nightly-report=3600000:60000`,
      JOB_WATCHDOG_OVERDUE_TOLERANCE: String(TOLERANCE),
      JOB_WATCHDOG_POLL_INTERVAL_MS: String(POLL_INTERVAL_MS),
      JOB_WATCHDOG_OVERDUE_HOLD_GRACE_MS: '1000',
      JOB_WATCHDOG_OVERDUE_HOLDS_ALERT_COUNT: '3',
      JOB_WATCHDOG_ALERTMANAGER_URL: alertmanager.url,
      JOB_WATCHDOG_ALERTMANAGER_RESEND_MS: '2000',
      JOB_WATCHDOG_WEBHOOK_URL: receiver.genericUrl,
      JOB_WATCHDOG_METRICS_PORT: '0',
    });
    const watchdog = await startJobWatchdog(config, createLogger({ name: 'job-watchdog', level: 'fatal' }));
    started.push({ database, watchdog });
    const name = new URL(database.adminUrl).pathname;
    const mine = (alert: { labels: Record<string, string> }) => alert.labels.database?.endsWith(name) === true;
    const ofJob = (job?: string) => (alert: { labels: Record<string, string> }) =>
      mine(alert) && (job === undefined || alert.labels.job_name === job);
    return {
      database,
      watchdog,
      mine,
      firing: (alert: string, job?: string) => received(receiver, alert, 'firing').filter(ofJob(job)),
      resolved: (alert: string, job?: string) => received(receiver, alert, 'resolved').filter(ofJob(job)),
    };
  }

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    alertmanager = await startAlertmanager(receiver);
  });

  afterAll(async () => {
    for (const { watchdog } of started) await watchdog.stop();
    await alertmanager?.close();
    await receiver?.close();
    for (const { database } of started) await database.drop();
    console.log('job watchdog timings (ms):', timings);
  });

  it('alerts JobRunOverdue when the sweeper process dies, and resolves when a sweeper runs again', async () => {
    // The sweeper runs before the watchdog starts, as in production: a watchdog started first rightly
    // calls a sweeper that has never claimed a run overdue after 3 s, and a loaded machine can take
    // that long to start a node process.
    let first: Awaited<ReturnType<typeof startSweeperProcess>> | undefined;
    const own = await ownWatchdog('overdue', async (database) => {
      const sweeper = await startSweeperProcess(database, SWEEP_INTERVAL_MS);
      first = sweeper;
      await waitFor(
        async () =>
          Number(
            (await database.admin(/* sql */ `select count(*) from job_runs where outcome = 'succeeded'`))[0]?.count,
          ) >= 2,
        {
          timeoutMs: 30_000,
          description: `the sweeper to finish two runs (output: ${sweeper.output()})`,
        },
      );
    });
    if (first === undefined) throw new Error('the sweeper did not start');
    await sleep(4 * POLL_INTERVAL_MS); // the watchdog has looked a few times, with the sweeper healthy
    const metrics = await (await fetch(first.metricsUrl)).text();
    expect(metrics).toMatch(/^hold_sweeper_runs_total\{outcome="succeeded",program="hold-sweeper"\} [1-9]/m);
    expect(metrics).toMatch(/^hold_sweeper_last_success_timestamp_seconds\{program="hold-sweeper"\} [1-9]/m);
    expect(own.firing('JobRunOverdue', 'hold-sweeper')).toEqual([]);
    expect(await probe(first, '/healthz')).toEqual({ status: 200, body: 'ok\n' });
    expect(await probe(first, '/readyz')).toEqual({ status: 200, body: 'ok\n' });

    const killedAt = Date.now();
    await first.killHard();
    const [overdue] = await waitFor(
      () => own.firing('JobRunOverdue', 'hold-sweeper').length > 0 && own.firing('JobRunOverdue', 'hold-sweeper'),
      {
        timeoutMs: 20_000,
        description: 'JobRunOverdue to reach the webhook through Alertmanager',
      },
    );
    timings.overdueAfterKill = (overdue?.receivedAt ?? 0) - killedAt;
    expect(overdue?.labels).toMatchObject({ severity: 'critical', service: 'job-watchdog', job_name: 'hold-sweeper' });
    expect(overdue?.annotations.summary).toMatch(
      /^hold-sweeper has not claimed a run for [\d.]+ s \(it should run every 1 s\)/,
    );
    expect(overdue?.annotations.runbook).toMatch(/^1\. .*\n2\. /);
    const generic = receiver.generic.find((call) => call.body.alertname === 'JobRunOverdue' && own.mine(call.body));
    expect(generic?.body).toMatchObject({ source: 'job-watchdog', status: 'firing' });
    expect(
      (await alertmanager.activeAlerts()).some(
        (a) => a.labels.alertname === 'Watchdog' && a.labels.service === 'job-watchdog',
      ),
    ).toBe(true);

    const restartedAt = Date.now();
    const second = await startSweeperProcess(own.database, SWEEP_INTERVAL_MS);
    const [back] = await waitFor(
      () => own.resolved('JobRunOverdue', 'hold-sweeper').length > 0 && own.resolved('JobRunOverdue', 'hold-sweeper'),
      {
        timeoutMs: 30_000,
        description: 'JobRunOverdue to resolve once a sweeper runs again',
      },
    );
    timings.resolvedAfterRestart = (back?.receivedAt ?? 0) - restartedAt;

    // Its readiness follows what the database lets it do (not its own word): refused the claim in
    // job_runs, it is not ready but still live; granted again, ready and claiming (rows in job_runs).
    await own.database.admin(/* sql */ `revoke insert on job_runs from stagefront_service`);
    const refused = await waitFor(
      async () => {
        const answer = await probe(second, '/readyz');
        return answer.status === 503 && answer;
      },
      { timeoutMs: 20_000, description: 'the sweeper to report not ready while it cannot claim its runs' },
    );
    expect(refused.body).toMatch(/^not ready: .*job_runs/);
    expect((await probe(second, '/healthz')).status).toBe(200);
    const claims = async () => Number((await own.database.admin(/* sql */ `select count(*) from job_runs`))[0]?.count);
    const claimedWhileRefused = await claims();
    await own.database.admin(/* sql */ `grant insert on job_runs to stagefront_service`);
    await waitFor(async () => (await probe(second, '/readyz')).status === 200, {
      timeoutMs: 20_000,
      description: 'the sweeper to be ready again once it can claim',
    });
    expect(await claims()).toBeGreaterThan(claimedWhileRefused);

    const stoppedAt = Date.now();
    await second.close();
    timings.gracefulStop = Date.now() - stoppedAt;
    expect(second.process.exitCode).toBe(0);
  }, 90_000);

  it('alerts OverdueHoldsPilingUp while expired holds keep their seats, and resolves once a sweeper expires them', async () => {
    const own = await ownWatchdog('piling');
    await own.database.admin(
      /* sql */ `insert into shows (show_id, title, starts_at, on_sale_at) values ('s1', 'Stadium', now() + interval '30 days', now() - interval '1 hour')`,
    );
    await own.database.admin(/* sql */ `
      insert into holds (hold_id, show_id, buyer_id, created_at, expires_at)
      select gen_random_uuid(), 's1', 'buyer-' || n, now() - interval '10 minutes', now() - interval '5 minutes' from generate_series(1, 4) as n`);
    const insertedAt = Date.now();
    const [piling] = await waitFor(
      () => own.firing('OverdueHoldsPilingUp').length > 0 && own.firing('OverdueHoldsPilingUp'),
      {
        timeoutMs: 20_000,
        description: 'OverdueHoldsPilingUp to reach the webhook',
      },
    );
    timings.overdueHoldsAlert = (piling?.receivedAt ?? 0) - insertedAt;
    expect(piling?.labels.severity).toBe('critical');
    expect(piling?.annotations.summary).toMatch(/^4 holds are past their expiry and still hold their seats/);

    const sweeper = await startSweeperProcess(own.database, SWEEP_INTERVAL_MS);
    await waitFor(() => own.resolved('OverdueHoldsPilingUp').length > 0, {
      timeoutMs: 30_000,
      description: 'OverdueHoldsPilingUp to resolve',
    });
    await sweeper.close();
    const statuses = await own.database.admin(/* sql */ `select status, count(*)::int as n from holds group by status`);
    expect(statuses).toEqual([{ status: 'expired', n: 4 }]);
  }, 90_000);

  it('alerts a run past its deadline and runs that keep failing; both resolve when the job recovers', async () => {
    const own = await ownWatchdog('deadline');
    await own.database.admin(/* sql */ `
      insert into job_runs (job_name, run_slot, claimed_by, started_at, finished_at, outcome, detail) values
        ('nightly-report', now() - interval '4 hours', 'host-a:1', now() - interval '4 hours', now() - interval '4 hours', 'failed', '{"error":"permission denied for table orders"}'),
        ('nightly-report', now() - interval '3 hours', 'host-a:1', now() - interval '3 hours', now() - interval '3 hours', 'failed', '{"error":"permission denied for table orders"}'),
        ('nightly-report', now() - interval '2 hours', 'host-a:1', now() - interval '2 hours', now() - interval '2 hours', 'failed', '{"error":"permission denied for table orders"}'),
        ('nightly-report', now() - interval '2 minutes', 'host-b:7', now() - interval '2 minutes', null, null, null)`);
    await waitFor(
      () =>
        own.firing('JobRunsFailing', 'nightly-report').length > 0 &&
        own.firing('JobRunPastDeadline', 'nightly-report').length > 0,
      {
        timeoutMs: 20_000,
        description: 'JobRunsFailing and JobRunPastDeadline to reach the webhook',
      },
    );
    expect(own.firing('JobRunsFailing', 'nightly-report')[0]?.annotations.description).toContain(
      'permission denied for table orders',
    );
    expect(own.firing('JobRunPastDeadline', 'nightly-report')[0]?.annotations.summary).toContain('host-b:7');

    await own.database.admin(
      /* sql */ `update job_runs set finished_at = now(), outcome = 'succeeded', detail = '{}' where job_name = 'nightly-report' and finished_at is null`,
    );
    await waitFor(
      () =>
        own.resolved('JobRunsFailing', 'nightly-report').length > 0 &&
        own.resolved('JobRunPastDeadline', 'nightly-report').length > 0,
      {
        timeoutMs: 20_000,
        description: 'JobRunsFailing and JobRunPastDeadline to resolve',
      },
    );
    const metrics = await (await fetch(`${own.watchdog.http.url}/metrics`)).text();
    expect(metrics).toMatch(
      /^job_watchdog_job_consecutive_failures\{job_name="nightly-report",program="job-watchdog"\} 0$/m,
    );
    expect(metrics).toMatch(/^job_watchdog_database_up\{program="job-watchdog"\} 1$/m);
  }, 60_000);

  it('alerts JobWatchdogDatabaseUnreachable while the watchdog cannot connect, and resolves when it can again', async () => {
    const own = await ownWatchdog('unreachable');
    const name = new URL(own.database.adminUrl).pathname.slice(1);
    const databaseUp = async () =>
      /^job_watchdog_database_up\{[^}]*\} 1$/m.test(await (await fetch(`${own.watchdog.http.url}/metrics`)).text());
    await waitFor(databaseUp, { timeoutMs: 10_000, description: 'the watchdog to read its database first' });
    expect(own.firing('JobWatchdogDatabaseUnreachable')).toEqual([]);

    await own.database.admin(/* sql */ `revoke connect on database ${pg.escapeIdentifier(name)} from public`);
    await own.database.admin(
      /* sql */ `select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and usename = $2`,
      [name, WATCHDOG_ROLE],
    );
    const [unreachable] = await waitFor(
      () => own.firing('JobWatchdogDatabaseUnreachable').length > 0 && own.firing('JobWatchdogDatabaseUnreachable'),
      { timeoutMs: 20_000, description: 'JobWatchdogDatabaseUnreachable to reach the webhook' },
    );
    expect(unreachable?.labels.severity).toBe('critical');
    expect(unreachable?.annotations.summary).toMatch(
      new RegExp(`^The job watchdog cannot read job_runs and holds on the seat database \\S+/${name}: nobody watches`),
    );
    expect(unreachable?.annotations.description).toMatch(/permission denied for database|terminat/);

    await own.database.admin(/* sql */ `grant connect on database ${pg.escapeIdentifier(name)} to public`);
    await waitFor(() => own.resolved('JobWatchdogDatabaseUnreachable').length > 0, {
      timeoutMs: 20_000,
      description: 'JobWatchdogDatabaseUnreachable to resolve',
    });
    expect(await databaseUp()).toBe(true);
  }, 60_000);

  it('reads with a role that can select job_runs and holds and nothing else', async () => {
    const own = await ownWatchdog('role');
    const { adminQuery } = await import('../support/stack.js');
    expect(
      (await adminQuery(own.database.watchdogUrl, /* sql */ `select count(*)::int as n from job_runs`)).rows,
    ).toEqual([{ n: 0 }]);
    await expect(adminQuery(own.database.watchdogUrl, /* sql */ `select count(*) from outbox`)).rejects.toThrow(
      /permission denied/,
    );
    await expect(adminQuery(own.database.watchdogUrl, /* sql */ `delete from holds`)).rejects.toThrow(
      /permission denied/,
    );
  });
});
