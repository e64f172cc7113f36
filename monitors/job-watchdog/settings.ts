/**
 * The job watchdog's settings table: parsing, `--help`, `.env.example` and its table in docs/configuration.md.
 */
import { z } from 'zod';
import { LOG_LEVELS, type LogLevel } from '../../lib/logger.js';
import {
  defineSettings,
  parseSettings,
  zDurationMs,
  zEnum,
  zInt,
  zPort,
  zString,
  zUrl,
  type Config,
  type SettingParser,
} from '../../lib/settings.js';
import { alertDeliverySettings } from '../alerting/alert-settings.js';

export const PROGRAM = 'job-watchdog';

/** A scheduled job the watchdog watches: its run interval and how long one run may take. */
export interface WatchedJob {
  name: string;
  intervalMs: number;
  deadlineMs: number;
}

const JOB_SPEC = /^([A-Za-z0-9._-]+)=(\d+)(?::(\d+))?$/;

/** `hold-sweeper=15000:120000,report=3600000`: job=intervalMs[:deadlineMs] (deadline defaults to the interval). */
function zJobs(): SettingParser<WatchedJob[]> {
  const entry = z
    .string()
    .trim()
    .regex(JOB_SPEC)
    .transform((text): WatchedJob => {
      const [, name = '', interval = '0', deadline] = JOB_SPEC.exec(text) ?? [];
      return { name, intervalMs: Number(interval), deadlineMs: Number(deadline ?? interval) };
    })
    .refine((job) => job.intervalMs >= 100 && job.deadlineMs >= 100);
  const schema = z
    .string()
    .transform((text) => text.split(',').filter((part) => part.trim() !== ''))
    .pipe(z.array(entry).min(1))
    .refine((jobs) => new Set(jobs.map((job) => job.name)).size === jobs.length);
  return {
    schema,
    expected:
      'a comma separated list of job=intervalMs or job=intervalMs:deadlineMs (each at least 100 ms, each job once)',
    example: 'hold-sweeper=15000:120000',
  };
}

/** A multiplier above 1, such as 3 or 2.5. */
function zTolerance(): SettingParser<number> {
  const schema = z
    .string()
    .trim()
    .regex(/^\d+(\.\d+)?$/)
    .transform(Number)
    .pipe(z.number().gt(1).lte(1000));
  return { schema, expected: 'a number above 1, such as 3 or 2.5', example: '3' };
}

export const jobWatchdogSettings = defineSettings(PROGRAM, {
  databaseUrl: {
    env: 'JOB_WATCHDOG_DATABASE_URL',
    default: undefined,
    secret: true,
    parser: zUrl({
      protocols: ['postgres', 'postgresql'],
      example: 'postgres://job_watchdog:secret@127.0.0.1:54329/stagefront',
    }),
    description: 'The seat database (or a replica of it), as the watchdog role: SELECT on job_runs and holds only.',
  },
  jobs: {
    env: 'JOB_WATCHDOG_JOBS',
    default: 'hold-sweeper=15000:120000',
    parser: zJobs(),
    description:
      "The scheduled jobs to watch in job_runs, with their run interval and the time one run may take (its deadline). Keep the interval equal to the job's own setting (HOLD_SWEEPER_INTERVAL_MS).",
  },
  overdueTolerance: {
    env: 'JOB_WATCHDOG_OVERDUE_TOLERANCE',
    default: '3',
    parser: zTolerance(),
    description: 'JobRunOverdue fires when a job has claimed no run for interval × this.',
  },
  failingRuns: {
    env: 'JOB_WATCHDOG_FAILING_RUNS',
    default: '3',
    parser: zInt({ min: 1, max: 1000, example: '3' }),
    description: 'JobRunsFailing fires when a job has failed this many runs since its last successful one.',
  },
  overdueHoldGraceMs: {
    env: 'JOB_WATCHDOG_OVERDUE_HOLD_GRACE_MS',
    default: '120000',
    parser: zDurationMs({ min: 0, example: '120000' }),
    description:
      'An active hold whose expires_at is older than this counts as overdue: the sweeper should have expired it.',
  },
  overdueHoldsAlertCount: {
    env: 'JOB_WATCHDOG_OVERDUE_HOLDS_ALERT_COUNT',
    default: '1',
    parser: zInt({ min: 1, example: '1' }),
    description: 'OverdueHoldsPilingUp fires when at least this many holds are overdue.',
  },
  pollIntervalMs: {
    env: 'JOB_WATCHDOG_POLL_INTERVAL_MS',
    default: '15000',
    parser: zDurationMs({ min: 100, example: '15000' }),
    description:
      'How often job_runs and holds are read (two index lookups per job); an alert arrives at most this long after its condition starts.',
  },
  ...alertDeliverySettings('JOB_WATCHDOG'),
  metricsHost: {
    env: 'JOB_WATCHDOG_METRICS_HOST',
    default: '127.0.0.1',
    parser: zString({ minLength: 1, example: '0.0.0.0' }),
    description: 'Address the /metrics, /healthz and /readyz server listens on.',
  },
  metricsPort: {
    env: 'JOB_WATCHDOG_METRICS_PORT',
    default: '9189',
    parser: zPort(),
    description: 'Port of the /metrics, /healthz and /readyz server.',
  },
  logLevel: {
    env: 'JOB_WATCHDOG_LOG_LEVEL',
    default: 'info',
    parser: zEnum(LOG_LEVELS as [LogLevel, ...LogLevel[]]),
    description: 'Lowest log level written.',
  },
});

export type JobWatchdogConfig = Config<typeof jobWatchdogSettings.settings>;

export function parseJobWatchdogConfig(
  env: Readonly<Record<string, string | undefined>> = process.env,
): JobWatchdogConfig {
  return parseSettings(jobWatchdogSettings, env);
}
