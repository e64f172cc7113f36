/**
 * The alerts the job watchdog raises in process: its part of the alert catalogue
 * (monitors/alerts/job-alerts.ts, the one source of each alert's severity, summary and runbook)
 * and its heartbeat. job-conditions.ts and job-source.ts write each summary from the catalogue's
 * sentence with the numbers of the moment.
 */
import { HEARTBEAT_ALERTS } from '../alerts/heartbeat-alerts.js';
import { JOB_ALERTS as CATALOGUE } from '../alerts/job-alerts.js';

const {
  JobWatchdogDown: _down,
  HoldSweeperDown: _sweeperDown,
  HoldSweeperNoRecentSuccess: _noSuccess,
  ...raisedInProcess
} = CATALOGUE;

export const JOB_ALERTS = { ...raisedInProcess, Watchdog: HEARTBEAT_ALERTS.Watchdog };

export type JobAlertName = keyof typeof JOB_ALERTS;
