/**
 * One rehearsal in an environment, in four steps: open what the run reads and sells with (two
 * report pools, the Alertmanager watcher, the seat service), put the show on sale, let the crowd
 * in (with the drills) until the pipeline has drained, and write the report. Everything a step
 * opens is registered with the run's releasers as it is opened, and released newest first whether
 * the run finishes or a step fails (lib/shutdown.ts), the environment last.
 */
import type { Logger } from '../lib/logger.js';
import { createPool, type Pool } from '../lib/postgres.js';
import { Releasers } from '../lib/shutdown.js';
import { sleep, waitFor } from '../lib/wait.js';
import { seatDatabaseNow, settled, type Reconciliation } from '../monitors/reconciliation/reconcile.js';
import { createShow } from '../seat-service/inventory.js';
import { openSeatService, type SeatService } from '../seat-service/service.js';
import type { SectionPlan } from '../seat-service/inventory.js';
import { parseSections } from '../seat-service/sections.js';
import { AlertWatcher } from './alerts.js';
import { reconcileRun } from './consistency.js';
import { promisedAlerts } from './drill-alerts.js';
import { runCrowd, type CrowdOutcome } from './crowd.js';
import type { DrillTarget } from './drill-targets.js';
import { runDrills, type DrillRun } from './drills.js';
import type { RehearsalEnvironment } from './environment.js';
import { createLiveView } from './live-view.js';
import { shownPath, writeReport } from './report.js';
import { recordRun } from './run-record.js';
import { Sampler } from './sampler.js';
import { stackLayout } from '../stack/config.js';
import { stackPrometheusIntervalMs } from '../stack/prometheus-intervals.js';
import { CrowdSchedule } from './schedule.js';
import type { RehearsalConfig } from './settings.js';

/** How long the rehearsal waits, after starting its programs, for alerts about them being down to resolve. */
const OWN_ALERTS_WAIT_MS = 60_000;
/** A promised alert resolves after one scrape and one evaluation of the part back; this many intervals are waited for it at most. */
const RESOLVE_WAIT_INTERVALS = 3;

/** What one run reads and sells with, open from the first step to the end. */
export interface OpenRun {
  env: RehearsalEnvironment;
  seatPool: Pool;
  consumerPool: Pool;
  alerts: AlertWatcher;
  service: SeatService;
}

/** The show on sale, once the run's own programs are seen up. */
export interface ShowOnSale {
  showId: string;
  sections: SectionPlan[];
  /** Seconds waited for the alerts about the rehearsal's programs (stopped since the last run) to resolve. */
  waitedSeconds: number;
}

/** What the crowd and the drills did, and the window of writes the run reconciles. */
export interface SoldShow {
  since: Date;
  until: Date;
  startedAt: number;
  finishedAt: number;
  crowd: { outcome: CrowdOutcome; ms: number };
  drillRuns: DrillRun[];
  reconciliation: Reconciliation;
  sampler: Sampler;
  /** The stack Prometheus's interval as it ran (stackPrometheusIntervalMs): what the drills' alert promises are judged by. */
  prometheusIntervalMs: number;
}

export interface RehearsalOptions {
  drills: DrillTarget[];
  /** The show's id; a fresh stadium-<time> one when undefined. */
  showId: string | undefined;
}

/**
 * Rehearses in `env` and returns the exit code (0 when every check passed). The run owns the
 * environment from here: it is closed (unless REHEARSAL_KEEP_RUNNING) after everything else, also
 * when a step fails.
 */
export async function rehearseIn(
  env: RehearsalEnvironment,
  config: RehearsalConfig,
  options: RehearsalOptions,
  logger: Logger,
): Promise<number> {
  const releasers = new Releasers(logger);
  releasers.add('rehearsal environment', () => env.close(config.keepRunning === 'yes'));
  let code: number;
  try {
    const run = await openRun(env, logger, releasers);
    const show = await putOnSale(run, config, options, logger);
    const sold = await sellShow(run, show, config, options.drills, logger, releasers);
    code = await report(run, show, sold, config, options.drills);
  } catch (err) {
    await releasers.releaseAll();
    throw err;
  }
  const failures = await releasers.releaseAll();
  if (failures.length > 0) throw failures[0];
  return code;
}

/** The report pools, the alert watcher and the seat service, each released by `releasers`. */
async function openRun(env: RehearsalEnvironment, logger: Logger, releasers: Releasers): Promise<OpenRun> {
  const pool = (name: string, connectionString: string) => {
    const opened = createPool({ connectionString, applicationName: 'rehearsal-report', logger, max: 3 });
    releasers.add(name, () => opened.end());
    return opened;
  };
  const seatPool = pool('seat database report pool', env.seatAdminUrl);
  const consumerPool = pool('consumer database report pool', env.consumerAdminUrl);
  const alerts = new AlertWatcher(env.alertmanagerUrl);
  alerts.start();
  releasers.add('alert watcher', () => alerts.stop());
  const service = await openSeatService(env.seatConfig, logger);
  releasers.add('seat service', () => service.close());
  return { env, seatPool, consumerPool, alerts, service };
}

/** Creates the show, waits out the alerts about the run's own programs, then the countdown to "10:00". */
async function putOnSale(
  run: OpenRun,
  config: RehearsalConfig,
  options: RehearsalOptions,
  logger: Logger,
): Promise<ShowOnSale> {
  const showId = options.showId ?? `stadium-${new Date().toISOString().slice(0, 19).replace(/[-:T]/g, '')}`;
  const sections = parseSections(config.sections);
  await createShow(run.service.pool, {
    showId,
    title: 'Stadium on-sale rehearsal',
    startsAt: new Date(Date.now() + 90 * 86_400_000),
    onSaleAt: new Date(Date.now() + config.countdownMs),
    sections,
  });
  // Between two rehearsals their programs are stopped, and alerts say so; they resolve once
  // Prometheus has scraped the programs again. The run begins after that, so they are not its alerts.
  const waitBegan = Date.now();
  const stillFiring = await run.alerts.waitForOwnProgramsSeen(OWN_ALERTS_WAIT_MS);
  const waitedSeconds = Math.round((Date.now() - waitBegan) / 1000);
  if (stillFiring.length > 0)
    logger.warn({ alerts: stillFiring }, "alerts about the rehearsal's programs still active; the report lists them");
  logger.info(
    {
      showId,
      seats: sections.reduce((n, s) => n + s.rows * s.seatsPerRow, 0),
      buyers: config.buyers,
      drills: options.drills,
    },
    'everything is running; the on-sale opens at "10:00"',
  );
  await sleep(config.countdownMs);
  return { showId, sections, waitedSeconds };
}

/** The crowd (and the drills) with the live view, until every hold has ended and every consumer caught up. */
async function sellShow(
  run: OpenRun,
  show: ShowOnSale,
  config: RehearsalConfig,
  drills: DrillTarget[],
  logger: Logger,
  releasers: Releasers,
): Promise<SoldShow> {
  const { seatPool, consumerPool, alerts, env } = run;
  const since = await seatDatabaseNow(seatPool);
  const startedAt = Date.now();
  const view = createLiveView(process.stdout);
  releasers.add('live view', () => view.close());
  const sampler = new Sampler({
    seatPool,
    consumerPool,
    showId: show.showId,
    since,
    slotName: env.slotName,
    alerts,
    onSample: (s) => view.update(s),
  });
  sampler.start();
  releasers.add('sampler', () => sampler.stop());
  const quiet = logger.child({}, { level: 'warn' }); // info lines would break the live view's redraw
  const drillContext = drills.length > 0 ? env.drillContext(config.drillDownMs, quiet) : undefined;
  const schedule = new CrowdSchedule(config.buyers, drills.length, config.drillSpacingMs, startedAt, config.arrivalMs);
  const crowdRun = runCrowd(run.service, show.showId, show.sections, { ...config, schedule }).then((outcome) => ({
    outcome,
    ms: Date.now() - startedAt,
  }));
  const [crowd, drillRuns] = await Promise.all([
    crowdRun,
    drillContext === undefined
      ? Promise.resolve([])
      : runDrills(drills, schedule, drillContext, () => sampler.latestLag()),
  ]);

  const expiryWait = config.holdTtlMs * 3 + 10_000 + (drills.length > 0 ? config.drainTimeoutMs : 0);
  await waitFor(
    async () => (await seatPool.query(`select count(*)::int as n from holds where status = 'active'`)).rows[0].n === 0,
    { timeoutMs: expiryWait, description: 'every abandoned hold to expire' },
  );
  // Every write of the run is in the outbox by now: the reconciliation window ends here.
  const until = new Date((await seatDatabaseNow(seatPool)).getTime() + 1);
  const reconciliation = await waitUntilReconciled(seatPool, consumerPool, since, until, config.drainTimeoutMs);
  // A drill long enough to raise an alert (drill-alerts.ts) is judged on its resolving too: give it the time.
  // As the stack's Prometheus runs, not as this command's settings say: the record judges by the same.
  const prometheusIntervalMs =
    drillContext === undefined
      ? stackLayout().settings.prometheusIntervalMs
      : await stackPrometheusIntervalMs(drillContext.layout);
  if (drillContext !== undefined) {
    const promised = drillRuns.flatMap((d) =>
      d.backAt === null ? [] : promisedAlerts(d.target, d.backAt - d.killedAt, prometheusIntervalMs),
    );
    if (promised.length > 0)
      await alerts.waitUntilResolved(promised, RESOLVE_WAIT_INTERVALS * prometheusIntervalMs + 10_000);
  }
  await sampler.stop();
  await sampler.sampleOnce();
  view.close();
  await alerts.poll();
  return {
    since,
    until,
    startedAt,
    finishedAt: Date.now(),
    crowd,
    drillRuns,
    reconciliation,
    sampler,
    prometheusIntervalMs,
  };
}

/** Reconciles the run's window every second until it is settled (nothing missing, no email in flight), or the drain timeout. */
async function waitUntilReconciled(
  seat: Pool,
  consumers: Pool,
  from: Date,
  to: Date,
  timeoutMs: number,
): Promise<Reconciliation> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const result = await reconcileRun(seat, consumers, from, to);
    if (settled(result) || Date.now() >= deadline) return result;
    await sleep(1000);
  }
}

/** Checks the run, writes the text, JSON and HTML reports, prints the text; 0 when every check passed. */
async function report(
  run: OpenRun,
  show: ShowOnSale,
  sold: SoldShow,
  config: RehearsalConfig,
  drills: DrillTarget[],
): Promise<number> {
  const { record, text } = await recordRun(run, show, sold, config, drills);
  const written = writeReport(config.reportDir, record, text);
  process.stdout.write(text);
  process.stdout.write(
    `\n  report: ${shownPath(written.text)}\n          ${shownPath(written.json)}\n          ${shownPath(written.html)}\n`,
  );
  return record.checks.every((c) => c.ok) ? 0 : 1;
}
