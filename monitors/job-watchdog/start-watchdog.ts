/**
 * Builds a running job watchdog from its configuration: the shared polling monitor
 * (monitors/alerting/start-monitor.ts) reading job_runs and holds through a JobConditionSource.
 * `stop()` releases all of it in reverse order of setup.
 */
import type { Logger } from '../../lib/logger.js';
import { startPollingMonitor, type PollingMonitorSpec, type RunningMonitor } from '../alerting/start-monitor.js';
import { JOB_ALERTS, type JobAlertName } from './alert-catalog.js';
import { JobConditionSource } from './job-source.js';
import { JobWatchdogMetrics } from './metrics.js';
import { PROGRAM, type JobWatchdogConfig } from './settings.js';

export type RunningJobWatchdog = RunningMonitor<JobAlertName>;

/** What makes the shared polling monitor the job watchdog. */
function jobWatchdogSpec(config: JobWatchdogConfig): PollingMonitorSpec<JobAlertName, JobWatchdogMetrics> {
  return {
    program: PROGRAM,
    monitorName: 'job watchdog',
    catalog: JOB_ALERTS,
    messages: { unreachable: 'cannot read job_runs and holds', reachable: 'watching job_runs and holds' },
    createMetrics: (registry) => new JobWatchdogMetrics(registry, config),
    createSource: ({ db, databaseLabel, metrics }) =>
      new JobConditionSource({ db, databaseLabel, rules: config, metrics }),
  };
}

export async function startJobWatchdog(config: JobWatchdogConfig, logger: Logger): Promise<RunningJobWatchdog> {
  return startPollingMonitor(jobWatchdogSpec(config), config, logger);
}
