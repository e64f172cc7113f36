/**
 * The on-sale rehearsal: the whole pipeline on this machine, a crowd at "10:00", and a report that
 * says whether every seat was sold at most once and every consumer saw every event exactly once.
 */
import { startProgram as startCli, flagValue } from '../lib/cli.js';
import type { Logger } from '../lib/logger.js';
import { createPool, type Pool } from '../lib/postgres.js';
import { parseSettings } from '../lib/settings.js';
import { sleep, waitFor } from '../lib/wait.js';
import { applyOutboxConnector } from '../connectors/outbox-connector.js';
import { ensureConsumerRole } from '../consumers/runtime/consumer-role.js';
import { connectorSettings } from '../connectors/settings.js';
import { ensureWatchdogRole } from '../monitors/job-watchdog/watchdog-role.js';
import { ensureMonitorRole } from '../monitors/slot-monitor/monitor-role.js';
import { createDatabaseIfMissing, migrateSeatDatabase, setupRoles } from '../seat-service/database-setup.js';
import { createShow } from '../seat-service/inventory.js';
import { openSeatService } from '../seat-service/service.js';
import { seatServiceSettings } from '../seat-service/settings.js';
import { parseSections } from '../seat-service/sections.js';
import { LOCAL_ROLE_PASSWORDS, localStackProgramEnv, stackEndpoints, stackLayout } from '../stack/config.js';
import { startStack } from '../stack/launcher.js';
import { drainProgress } from './consistency.js';
import { runCrowd } from './crowd.js';
import { startMailSink } from './mail-sink.js';
import { startProgram, type RunningProgram } from './programs.js';
import { printReport } from './report.js';
import { parseRehearsalConfig, rehearsalSettings, type RehearsalConfig } from './settings.js';

const USAGE = `Usage: npm run rehearsal [-- --show NAME]

Starts the native stack, prepares the seat and consumer databases, applies the outbox connector,
starts the three consumers, the slot monitor and a local SMTP sink, then lets a crowd of buyers
press the button at once and reports what happened.`;

async function rehearse(config: RehearsalConfig, args: string[], logger: Logger): Promise<number> {
  const layout = stackLayout();
  const endpoints = stackEndpoints(layout);
  await startStack(logger, layout);
  // The local stack's own passwords, passed explicitly: the programs have no default for any.
  const localEnv = localStackProgramEnv(layout);
  const seatConfig = parseSettings(seatServiceSettings, { ...process.env, ...localEnv, HOLD_TTL_MS: String(config.holdTtlMs) });
  const consumerDbAdmin = seatConfig.adminDatabaseUrl.replace(/\/[^/]+$/, '/stagefront_consumers');
  await prepareDatabases(seatConfig.adminDatabaseUrl, consumerDbAdmin, logger);
  // The consumers log in as their own role, the owner of their database, never as the superuser.
  const consumerDbUrl = withCredentials(consumerDbAdmin, CONSUMER_ROLE, LOCAL_ROLE_PASSWORDS.consumer);
  await applyOutboxConnector(parseSettings(connectorSettings, { ...process.env, ...localEnv }), logger);

  const programs: RunningProgram[] = [];
  const mail = await startMailSink(config.smtpPort);
  const seatPool = createPool({ connectionString: seatConfig.adminDatabaseUrl, applicationName: 'rehearsal-report', logger, max: 2 });
  const consumerPool = createPool({ connectionString: consumerDbAdmin, applicationName: 'rehearsal-report', logger, max: 2 });
  const service = await openSeatService(seatConfig, logger);
  try {
    programs.push(...startPrograms({ consumerDbUrl, seatAdminUrl: seatConfig.adminDatabaseUrl, seatServiceUrl: seatConfig.databaseUrl, alertmanagerUrl: endpoints.alertmanagerUrl }, config, layout.logDir));
    await waitForReady(programs);
    const showId = flagValue(args, 'show') ?? `stadium-${new Date().toISOString().slice(0, 19).replace(/[-:T]/g, '')}`;
    const sections = parseSections(config.sections);
    await createShow(service.pool, { showId, title: 'Stadium on-sale rehearsal', startsAt: new Date(Date.now() + 90 * 86_400_000), onSaleAt: new Date(Date.now() + config.countdownMs), sections });
    logger.info({ showId, seats: sections.reduce((n, s) => n + s.rows * s.seatsPerRow, 0), buyers: config.buyers }, 'everything is running; the on-sale opens at "10:00"');
    await sleep(config.countdownMs);
    const began = Date.now();
    const crowd = await runCrowd(service, showId, sections, config);
    const crowdMs = Date.now() - began;
    await waitFor(async () => (await seatPool.query(`select count(*)::int as n from holds where status = 'active'`)).rows[0].n === 0, { timeoutMs: config.holdTtlMs * 3 + 10_000, description: 'every abandoned hold to expire' });
    const since = new Date(began);
    const drained = await waitUntilDrained(seatPool, consumerPool, since, config.drainTimeoutMs);
    return await printReport({ showId, crowd, crowdMs, drained, seatPool, consumerPool, mail, programs, since, alertmanagerUrl: endpoints.alertmanagerUrl });
  } finally {
    if (config.keepRunning !== 'yes') await Promise.all(programs.map((p) => p.stop()));
    await service.close();
    await seatPool.end();
    await consumerPool.end();
    if (config.keepRunning !== 'yes') await mail.close();
  }
}

async function prepareDatabases(seatAdminUrl: string, consumerAdminUrl: string, logger: Logger): Promise<void> {
  await createDatabaseIfMissing(seatAdminUrl, logger);
  await createDatabaseIfMissing(consumerAdminUrl, logger);
  const admin = createPool({ connectionString: seatAdminUrl, applicationName: 'rehearsal-setup', logger, max: 1 });
  try {
    await migrateSeatDatabase(admin, logger);
    await setupRoles(admin, LOCAL_ROLE_PASSWORDS);
    await ensureMonitorRole(admin, { role: 'slot_monitor', password: 'slot_monitor' });
    await ensureWatchdogRole(admin, { role: 'job_watchdog', password: 'job_watchdog' });
  } finally {
    await admin.end();
  }
  const consumerAdmin = createPool({ connectionString: consumerAdminUrl, applicationName: 'rehearsal-setup', logger, max: 1 });
  try {
    await ensureConsumerRole(consumerAdmin, { role: CONSUMER_ROLE, password: LOCAL_ROLE_PASSWORDS.consumer });
  } finally {
    await consumerAdmin.end();
  }
}

const CONSUMER_ROLE = 'stagefront_consumer';

function withCredentials(url: string, user: string, password: string): string {
  const parsed = new URL(url);
  parsed.username = user;
  parsed.password = password;
  return parsed.toString();
}

interface ProgramUrls {
  consumerDbUrl: string;
  seatAdminUrl: string;
  seatServiceUrl: string;
  alertmanagerUrl: string;
}

/** The consumers, the hold sweeper, and the two watchers, each its own process. */
function startPrograms(urls: ProgramUrls, config: RehearsalConfig, logDir: string): RunningProgram[] {
  const common = { CONSUMER_DATABASE_URL: urls.consumerDbUrl, LOG_LEVEL: 'warn' };
  const asRole = (role: string) => urls.seatAdminUrl.replace('postgres:postgres@', `${role}:${role}@`);
  return [
    startProgram('seat-availability', 'consumers/seat-availability/main.ts', common, logDir),
    startProgram('sales-ledger', 'consumers/sales-ledger/main.ts', common, logDir),
    startProgram('confirmation-email', 'consumers/confirmation-email/main.ts', { ...common, SMTP_HOST: '127.0.0.1', SMTP_PORT: String(config.smtpPort) }, logDir),
    startProgram('hold-sweeper', 'seat-service/sweeper-main.ts', { SEAT_DB_URL: urls.seatServiceUrl, HOLD_SWEEPER_INTERVAL_MS: String(config.sweepIntervalMs), LOG_LEVEL: 'warn' }, logDir),
    startProgram('job-watchdog', 'monitors/job-watchdog/main.ts', {
      JOB_WATCHDOG_DATABASE_URL: asRole('job_watchdog'),
      JOB_WATCHDOG_JOBS: `hold-sweeper=${config.sweepIntervalMs}:${config.sweepIntervalMs * 10}`,
      JOB_WATCHDOG_POLL_INTERVAL_MS: '1000',
      JOB_WATCHDOG_ALERTMANAGER_URL: urls.alertmanagerUrl,
    }, logDir),
    startProgram('slot-monitor', 'monitors/slot-monitor/main.ts', {
      SLOT_MONITOR_DATABASE_URL: asRole('slot_monitor'),
      SLOT_MONITOR_ALERTMANAGER_URL: urls.alertmanagerUrl,
      SLOT_MONITOR_SLOTS: 'stagefront_outbox',
      SLOT_MONITOR_POLL_INTERVAL_MS: '2000',
    }, logDir),
  ];
}

const READY_PORTS: Record<string, number> = { 'seat-availability': 9471, 'confirmation-email': 9472, 'sales-ledger': 9473, 'slot-monitor': 9188, 'job-watchdog': 9189, 'hold-sweeper': 9190 };

async function waitForReady(programs: RunningProgram[]): Promise<void> {
  for (const program of programs) {
    await waitFor(async () => {
      if (program.child.exitCode !== null) throw new Error(`${program.name} exited (${program.child.exitCode}); see ${program.logFile}`);
      return (await fetch(`http://127.0.0.1:${READY_PORTS[program.name]}/readyz`).catch(() => undefined))?.ok;
    }, { timeoutMs: 60_000, intervalMs: 250, description: `${program.name} to be ready (log: ${program.logFile})` });
  }
}

async function waitUntilDrained(seatPool: Pool, consumerPool: Pool, since: Date, timeoutMs: number) {
  try {
    return await waitFor(async () => {
      const progress = await drainProgress(seatPool, consumerPool, since);
      return progress.every((p) => p.handled >= p.published) ? progress : undefined;
    }, { timeoutMs, intervalMs: 500, description: 'every consumer to handle every event' });
  } catch {
    return drainProgress(seatPool, consumerPool, since);
  }
}

startCli({ settings: rehearsalSettings, usage: USAGE, main: rehearse, parse: parseRehearsalConfig });
