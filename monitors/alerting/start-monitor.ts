/**
 * Builds a running polling monitor from its configuration: the database pool, the alert sinks with
 * their delivery queues, the tracker and publisher, the metrics server and the poll loop. `stop()`
 * releases all of it in reverse order of setup. Each monitor brings only what it reads
 * (a ConditionSource), its alert catalog and its metrics.
 */
import { hostname } from 'node:os';
import type pg from 'pg';
import type { Registry } from 'prom-client';
import type { Logger } from '../../lib/logger.js';
import { serveProgramEndpoint } from '../../lib/long-running-program.js';
import { createMetricsRegistry, type HttpEndpoint } from '../../lib/metrics.js';
import { createPool } from '../../lib/postgres.js';
import { Releasers } from '../../lib/shutdown.js';
import { createAlertSinks, type AlertDestinations } from './alert-destinations.js';
import { AlertPublisher, heartbeatAlert } from './alert-publisher.js';
import { AlertTracker, type AlertCatalog } from './alert-tracker.js';
import { PollLoop, type ConditionSource, type ReachabilityMessages } from './poll-loop.js';
import type { PollMetrics } from './poll-metrics.js';

/** The settings every polling monitor has (the rows of alertDeliverySettings plus these). */
export interface PollingMonitorConfig extends Omit<AlertDestinations, 'source' | 'alertTtlMs'> {
  databaseUrl: string;
  pollIntervalMs: number;
  alertmanagerResendMs: number;
  metricsPort: number;
  metricsHost: string;
}

interface MonitorParts<Metrics> {
  db: pg.Pool;
  /** `host:port/database`, the `database` label of every alert. */
  databaseLabel: string;
  metrics: Metrics;
  logger: Logger;
}

export interface PollingMonitorSpec<Name extends string, Metrics extends PollMetrics<string>> {
  /** "slot-monitor": application_name, the `service` label and the `program` label of the metrics. */
  program: string;
  /** "slot monitor", in the Watchdog heartbeat. */
  monitorName: string;
  catalog: AlertCatalog<Name | 'Watchdog'>;
  messages: ReachabilityMessages;
  createMetrics(registry: Registry): Metrics;
  createSource(parts: MonitorParts<Metrics>): ConditionSource<Name>;
}

export interface RunningMonitor<Name extends string> {
  loop: PollLoop<Name | 'Watchdog'>;
  /** The /metrics, /healthz and /readyz server. */
  http: HttpEndpoint;
  stop(): Promise<void>;
}

/** An alert not re-sent within this time expires at Alertmanager (Prometheus uses 4 × max(resend delay, evaluation interval)). */
function alertTtlMs(config: { alertmanagerResendMs: number; pollIntervalMs: number }): number {
  return 4 * Math.max(config.alertmanagerResendMs, config.pollIntervalMs);
}

/** `host:port/database` of a connection string, without user or password: the `database` label of every alert. */
function databaseLabel(connectionString: string): string {
  const url = new URL(connectionString);
  return `${url.hostname}:${url.port || '5432'}${url.pathname}`;
}

/**
 * The generatorURL of every alert: the monitor's own /metrics, which holds the numbers the alert was
 * computed from (what Prometheus's graph link is for its alerts). A wildcard listen address is
 * replaced by the machine's name, so the link works from elsewhere.
 */
function generatorUrl(httpUrl: string): string {
  const url = new URL(httpUrl);
  if (['0.0.0.0', '[::]'].includes(url.hostname)) url.hostname = hostname();
  return `${url.origin}/metrics`;
}

/** One connection, whose connect timeout follows the poll interval (1 to 5 s). */
function createMonitorPool(program: string, config: PollingMonitorConfig, logger: Logger): pg.Pool {
  const connectionTimeoutMs = Math.min(5_000, Math.max(1_000, config.pollIntervalMs));
  return createPool({
    connectionString: config.databaseUrl,
    applicationName: program,
    logger,
    max: 1,
    connectionTimeoutMs,
  });
}

export async function startPollingMonitor<Name extends string, Metrics extends PollMetrics<string>>(
  spec: PollingMonitorSpec<Name, Metrics>,
  config: PollingMonitorConfig,
  logger: Logger,
): Promise<RunningMonitor<Name>> {
  const { program } = spec;
  const releasers = new Releasers(logger);
  try {
    const registry = createMetricsRegistry(program);
    const metrics = spec.createMetrics(registry);
    const db = createMonitorPool(program, config, logger);
    releasers.add('seat database pool', () => db.end());
    const sinks = createAlertSinks(
      { ...config, source: program, alertTtlMs: alertTtlMs(config) },
      logger,
      releasers,
      (sink, outcome) => metrics.recordDelivery(sink, outcome),
    );
    const label = databaseLabel(config.databaseUrl);
    // Listening first: the alerts link to this server's address. /readyz reads the loop made below
    // (no await in between, so no request can come before it exists).
    const http = await serveProgramEndpoint(releasers, {
      registry,
      port: config.metricsPort,
      host: config.metricsHost,
      ready: () => loop.lastPollOk,
    });
    const staticLabels = { service: program, database: label };
    const tracker = new AlertTracker<Name | 'Watchdog'>(spec.catalog, {
      staticLabels,
      generatorUrl: generatorUrl(http.url),
    });
    const publisher = new AlertPublisher({
      tracker,
      sinks,
      resendIntervalMs: config.alertmanagerResendMs,
      heartbeat: heartbeatAlert(spec.monitorName),
    });
    const source = spec.createSource({ db, databaseLabel: label, metrics, logger });
    const loop = new PollLoop({
      source,
      publisher,
      metrics,
      pollIntervalMs: config.pollIntervalMs,
      databaseLabel: label,
      messages: spec.messages,
      logger,
    });
    loop.start();
    releasers.add('poll loop', () => loop.stop());
    return { loop, http, stop: async () => void (await releasers.releaseAll()) };
  } catch (err) {
    await releasers.releaseAll();
    throw err;
  }
}
