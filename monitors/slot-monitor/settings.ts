/**
 * The slot monitor's settings table: parsing, `--help` and `.env.example` all come from it.
 */
import { z } from 'zod';
import { LOG_LEVELS, type LogLevel } from '../../lib/logger.js';
import {
  ConfigError,
  defineSettings,
  parseBytes,
  parseSettings,
  zBytes,
  zDurationMs,
  zEnum,
  zInt,
  zList,
  zPort,
  zString,
  zUrl,
  type Config,
  type SettingParser,
} from '../../lib/settings.js';
import { HEARTBEAT_INTERVAL_MS, OFFSET_FLUSH_INTERVAL_MS } from '../../connectors/slot-confirmation.js';
import { stackSettings } from '../../stack/config.js';
import { alertDeliverySettings } from '../alerting/alert-settings.js';

export const PROGRAM = 'slot-monitor';

/** One source of truth for the cap: the monitor's default target is what the stack's Postgres is started with. */
const STACK_MAX_SLOT_WAL_KEEP_SIZE = stackSettings.settings.postgresMaxSlotWalKeepSize.default;
/** The stack's Connect worker flushes offsets (and so confirms the slot's position) this often, and its connector sends a heartbeat this often. */
const STACK_OFFSET_FLUSH_INTERVAL_MS = String(OFFSET_FLUSH_INTERVAL_MS);
const STACK_HEARTBEAT_INTERVAL_MS = String(HEARTBEAT_INTERVAL_MS);

/** A number of at least 1, e.g. 2 or 1.5. */
function zFactor(example: string): SettingParser<number> {
  const schema = z
    .string()
    .trim()
    .regex(/^\d+(\.\d+)?$/)
    .transform(Number)
    .pipe(z.number().gte(1));
  return { schema, expected: 'a number of at least 1, such as 2 or 1.5', example };
}

/** A number between 0 and 1 (exclusive), e.g. 0.25. */
function zFraction(example: string): SettingParser<number> {
  const schema = z
    .string()
    .trim()
    .regex(/^0?\.\d+$/)
    .transform(Number)
    .pipe(z.number().gt(0).lt(1));
  return { schema, expected: 'a fraction between 0 and 1, such as 0.25', example };
}

/** Room between a slot's retained WAL and a cap the monitor sets: a share of the target, or a size. */
export type KeepSizeMargin = { percentOfTarget: number } | { bytes: number };

const PERCENT = /^(\d{1,2})%$/;

/** "25%" (of the target, 1 to 99) or a size such as "512MB". */
function zKeepSizeMargin(example: string): SettingParser<KeepSizeMargin> {
  const schema = z
    .string()
    .trim()
    .refine((text) => (PERCENT.test(text) && Number(PERCENT.exec(text)?.[1]) >= 1) || (parseBytes(text) ?? 0) > 0)
    .transform((text): KeepSizeMargin => {
      const percent = PERCENT.exec(text)?.[1];
      return percent === undefined ? { bytes: parseBytes(text) ?? 0 } : { percentOfTarget: Number(percent) };
    });
  return {
    schema,
    expected:
      'a percentage of the target from 1% to 99%, such as 25%, or a size above 0 with a unit (B, kB, MB, GB, TB)',
    example,
  };
}

const logLevel: SettingParser<LogLevel> = zEnum(LOG_LEVELS as [LogLevel, ...LogLevel[]]);
const identifier = zString({
  minLength: 1,
  pattern: /^[^\s]+$/,
  expected: 'a Postgres identifier (no spaces)',
  example: 'outbox',
});

export const slotMonitorSettings = defineSettings(PROGRAM, {
  databaseUrl: {
    env: 'SLOT_MONITOR_DATABASE_URL',
    default: undefined,
    secret: true,
    parser: zUrl({
      protocols: ['postgres', 'postgresql'],
      example: 'postgres://slot_monitor:secret@127.0.0.1:54329/seats',
    }),
    description:
      'The seat database, connected to as the monitor role (pg_monitor plus ALTER SYSTEM on max_slot_wal_keep_size).',
  },
  pollIntervalMs: {
    env: 'SLOT_MONITOR_POLL_INTERVAL_MS',
    default: '10000',
    parser: zDurationMs({ min: 100, example: '10000' }),
    description:
      'How often pg_replication_slots is read; an alert arrives at most this long after its condition starts.',
  },
  slots: {
    env: 'SLOT_MONITOR_SLOTS',
    default: '',
    parser: zList({ example: 'stagefront_outbox' }),
    description: 'Slots that must exist (a missing one alerts); empty watches every slot and none is required.',
  },
  inactiveAlertAfterMs: {
    env: 'SLOT_MONITOR_INACTIVE_ALERT_AFTER_MS',
    default: '300000',
    parser: zDurationMs({ min: 0, example: '300000' }),
    description: 'A slot nobody reads for longer than this raises SlotInactive.',
  },
  headroomWarningFraction: {
    env: 'SLOT_MONITOR_HEADROOM_WARNING_FRACTION',
    default: '0.5',
    parser: zFraction('0.5'),
    description: 'SlotHeadroomLow fires when safe_wal_size falls below this fraction of max_slot_wal_keep_size.',
  },
  headroomCriticalFraction: {
    env: 'SLOT_MONITOR_HEADROOM_CRITICAL_FRACTION',
    default: '0.2',
    parser: zFraction('0.2'),
    description: 'SlotHeadroomCritical fires when safe_wal_size falls below this fraction of max_slot_wal_keep_size.',
  },
  maxSlotWalKeepSize: {
    env: 'SLOT_MONITOR_MAX_SLOT_WAL_KEEP_SIZE',
    default: STACK_MAX_SLOT_WAL_KEEP_SIZE,
    parser: zBytes({ example: '10GB' }),
    description:
      'The max_slot_wal_keep_size the seat database must have: whole megabytes, at least 1MB (-1, unlimited, is refused). The default is the value the stack writes (STACK_POSTGRES_MAX_SLOT_WAL_KEEP_SIZE, stack/postgres.conf), so a fresh stack is left as it is.',
  },
  keepSizeMargin: {
    env: 'SLOT_MONITOR_KEEP_SIZE_MARGIN',
    default: '25%',
    parser: zKeepSizeMargin('25%'),
    description:
      "Room the monitor leaves between a slot's retained WAL and any cap it sets: it lowers max_slot_wal_keep_size (back to the target after a raise, or from -1) only to a value every slot retains at least this much less than, so lowering never invalidates a slot; never less than one WAL segment (wal_segment_size), since Postgres invalidates by whole segments. A size, or a percentage of the target; the default, a quarter (1GB of the stack's 4GB), is more than an active slot holds through a write burst (233 MB measured at 13 MB/s) and leaves a slot that just caught up room for the WAL written before its next confirmation.",
  },
  keepSizeMode: {
    env: 'SLOT_MONITOR_KEEP_SIZE_MODE',
    default: 'enforce',
    parser: zEnum(['enforce', 'check'] as const),
    description:
      'enforce sets a differing max_slot_wal_keep_size with ALTER SYSTEM and says so, but holds a cap raised above the target (with a warning) while a slot needs it; check only raises a warning.',
  },
  outboxSchema: {
    env: 'SLOT_MONITOR_OUTBOX_SCHEMA',
    default: 'public',
    parser: identifier,
    description: 'Schema of the outbox table the connector captures.',
  },
  outboxTable: {
    env: 'SLOT_MONITOR_OUTBOX_TABLE',
    default: 'outbox',
    parser: identifier,
    description:
      'The outbox table; retained WAL growing while it gets no inserts means the connector heartbeat is not working.',
  },
  growthWindowPolls: {
    env: 'SLOT_MONITOR_GROWTH_WINDOW_POLLS',
    default: '6',
    parser: zInt({ min: 2, max: 1000, example: '6' }),
    description:
      'Polls over which retained WAL must keep growing, with no outbox inserts, before SlotWalGrowingWithoutOutboxWrites fires.',
  },
  growthMinBytes: {
    env: 'SLOT_MONITOR_GROWTH_MIN_BYTES',
    default: '64MB',
    parser: zBytes({ example: '64MB' }),
    description: 'Retained WAL must grow by at least this much over the window to count as growing.',
  },
  walRateWindowMs: {
    env: 'SLOT_MONITOR_WAL_RATE_WINDOW_MS',
    default: '86400000',
    parser: zDurationMs({ min: 1000, example: '86400000' }),
    description:
      'The peak WAL write rate (between two polls) is the highest seen within this window; SlotCapTooSmallForWalRate judges the cap against it.',
  },
  offsetFlushIntervalMs: {
    env: 'SLOT_MONITOR_OFFSET_FLUSH_INTERVAL_MS',
    default: STACK_OFFSET_FLUSH_INTERVAL_MS,
    parser: zDurationMs({ min: 0, example: '5000' }),
    description:
      "offset.flush.interval.ms of the Kafka Connect worker (the stack's value by default): an active slot's position is confirmed at most this often.",
  },
  heartbeatIntervalMs: {
    env: 'SLOT_MONITOR_HEARTBEAT_INTERVAL_MS',
    default: STACK_HEARTBEAT_INTERVAL_MS,
    parser: zDurationMs({ min: 0, example: '10000' }),
    description:
      "heartbeat.interval.ms of the Debezium connector (the stack's value by default): how long a quiet outbox leaves nothing to confirm.",
  },
  walBurstMargin: {
    env: 'SLOT_MONITOR_WAL_BURST_MARGIN',
    default: '2',
    parser: zFactor('2'),
    description:
      'SlotCapTooSmallForWalRate fires when max_slot_wal_keep_size is below peak WAL rate × (15 s running-transactions interval + offset flush + heartbeat interval) × this factor.',
  },
  standbyUrls: {
    env: 'SLOT_MONITOR_STANDBY_URLS',
    default: '',
    secret: true,
    parser: zList({ example: 'postgres://slot_monitor:secret@127.0.0.1:54330/stagefront' }),
    description:
      "The seat database's standbys (Postgres 17+, the monitor role's URLs; the stack's with STACK_POSTGRES_STANDBY=yes). Each poll watches whichever node is not in recovery as the primary, so the monitor follows a failover, and alerts when a standby's copy of a failover slot is missing, not synchronized or behind. Empty: one node.",
  },
  standbySlotMaxLag: {
    env: 'SLOT_MONITOR_STANDBY_SLOT_MAX_LAG',
    default: '64MB',
    parser: zBytes({ example: '64MB' }),
    description:
      "StandbySlotBehind fires when a standby's copy of a slot trails the primary's confirmed_flush_lsn by more than this (the copy follows every few seconds to 30 s).",
  },
  ...alertDeliverySettings('SLOT_MONITOR'),
  noticeDurationMs: {
    env: 'SLOT_MONITOR_NOTICE_DURATION_MS',
    default: '900000',
    parser: zDurationMs({ min: 1000, example: '900000' }),
    description: 'How long an info alert about a change the monitor made (SlotKeepSizeCorrected) stays firing.',
  },
  metricsHost: {
    env: 'SLOT_MONITOR_METRICS_HOST',
    default: '127.0.0.1',
    parser: zString({ minLength: 1, example: '0.0.0.0' }),
    description: 'Address the /metrics, /healthz and /readyz server listens on.',
  },
  metricsPort: {
    env: 'SLOT_MONITOR_METRICS_PORT',
    default: '9188',
    parser: zPort(),
    description: 'Port of the /metrics, /healthz and /readyz server.',
  },
  logLevel: {
    env: 'SLOT_MONITOR_LOG_LEVEL',
    default: 'info',
    parser: logLevel,
    description: 'Lowest log level written.',
  },
});

export type SlotMonitorConfig = Config<typeof slotMonitorSettings.settings>;

const MB = 1024 * 1024;
const MAX_KEEP_SIZE_MB = 2_147_483_647;

/** Problems with the keep-size target that a parser cannot see alone, one sentence each. */
function keepSizeProblems(target: number): string[] {
  const env = slotMonitorSettings.settings.maxSlotWalKeepSize.env;
  if (target < 0) return [`${env}=-1 would let a dead slot fill the disk; set a cap such as 10GB.`];
  if (target < MB) return [`${env} must be at least 1MB (Postgres counts this setting in megabytes); set e.g. 10GB.`];
  if (target % MB !== 0)
    return [
      `${env} must be a whole number of megabytes (Postgres counts this setting in MB); use e.g. ${Math.round(target / MB)}MB.`,
    ];
  if (target / MB > MAX_KEEP_SIZE_MB) return [`${env} is larger than Postgres accepts (2147483647MB); set e.g. 10GB.`];
  return [];
}

/** The margin in bytes: a percentage of the target rounded up to whole megabytes, or the size given. */
export function keepSizeMarginBytes(config: Pick<SlotMonitorConfig, 'keepSizeMargin' | 'maxSlotWalKeepSize'>): number {
  const margin = config.keepSizeMargin;
  return 'bytes' in margin
    ? margin.bytes
    : Math.ceil((config.maxSlotWalKeepSize * margin.percentOfTarget) / 100 / MB) * MB;
}

function marginProblems(config: SlotMonitorConfig): string[] {
  if (config.maxSlotWalKeepSize <= 0 || keepSizeMarginBytes(config) < config.maxSlotWalKeepSize) return [];
  const { keepSizeMargin: margin, maxSlotWalKeepSize: target } = slotMonitorSettings.settings;
  return [
    `${margin.env} must be smaller than ${target.env}: the monitor restores the target only once every slot retains at most the target minus the margin; use a percentage such as 25%.`,
  ];
}

function fractionProblems(config: SlotMonitorConfig): string[] {
  if (config.headroomCriticalFraction < config.headroomWarningFraction) return [];
  const { headroomCriticalFraction: critical, headroomWarningFraction: warning } = slotMonitorSettings.settings;
  return [
    `${critical.env} (${config.headroomCriticalFraction}) must be below ${warning.env} (${config.headroomWarningFraction}); lower the critical fraction.`,
  ];
}

/** Parses and cross-checks the settings; throws one ConfigError naming every bad variable and its fix. */
export function parseSlotMonitorConfig(
  env: Readonly<Record<string, string | undefined>> = process.env,
): SlotMonitorConfig {
  const config = parseSettings(slotMonitorSettings, env);
  const problems = [
    ...keepSizeProblems(config.maxSlotWalKeepSize),
    ...marginProblems(config),
    ...fractionProblems(config),
  ];
  if (problems.length > 0) throw new ConfigError(PROGRAM, problems);
  return config;
}
