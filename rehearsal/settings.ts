import { kafkaSecurityProblems, kafkaSecuritySettings } from '../lib/kafka-security.js';
import {
  ConfigError,
  defineSettings,
  parseSettings,
  zDurationMs,
  zEnum,
  zInt,
  zPort,
  zString,
  type Config,
} from '../lib/settings.js';
import { DRILL_TARGETS, zDrills } from './drill-targets.js';

const optionalUrl = (protocols: readonly string[], example: string) =>
  zString({
    pattern: new RegExp(`^(|(${protocols.join('|')})://\\S+)$`),
    expected: `a URL starting with ${protocols.map((p) => `${p}://`).join(' or ')} (or empty)`,
    example,
  });

export const rehearsalSettings = defineSettings('rehearsal', {
  sections: {
    env: 'REHEARSAL_SECTIONS',
    default: 'A:20x25:12900,B:20x25:8900,C:40x25:5900',
    parser: zString({
      pattern: /^[A-Za-z0-9]+:\d+x\d+:\d+(,[A-Za-z0-9]+:\d+x\d+:\d+)*$/,
      expected: 'sections like A:20x25:12900 (name:rows x seats per row:price in cents), comma separated',
      example: 'A:20x25:12900,B:40x25:5900',
    }),
    description: 'The show: sections, rows, seats per row and price. The first section is the one everybody wants.',
  },
  buyers: {
    env: 'REHEARSAL_BUYERS',
    default: '2500',
    parser: zInt({ min: 1, max: 1_000_000, example: '2500' }),
    description: 'Buyers pressing the button at 10:00.',
  },
  concurrency: {
    env: 'REHEARSAL_CONCURRENCY',
    default: '48',
    parser: zInt({ min: 1, max: 1000, example: '48' }),
    description: 'Buyers in flight at the same time (each a seat service call).',
  },
  arrivalMs: {
    env: 'REHEARSAL_ARRIVAL_MS',
    default: '0',
    parser: zDurationMs({ min: 0, max: 3_600_000, example: '180000' }),
    description:
      'Without drills: the buyers arrive evenly over this long instead of all at once (a long, quiet run: does any alert fire when nothing is wrong?). With drills the drill spacing sets the arrivals.',
  },
  abandonPercent: {
    env: 'REHEARSAL_ABANDON_PERCENT',
    default: '15',
    parser: zInt({ min: 0, max: 100, example: '15' }),
    description: 'Buyers who hold seats and walk away: their holds expire and the sweeper frees the seats.',
  },
  releasePercent: {
    env: 'REHEARSAL_RELEASE_PERCENT',
    default: '5',
    parser: zInt({ min: 0, max: 100, example: '5' }),
    description: 'Buyers who hold seats and give them back.',
  },
  holdTtlMs: {
    env: 'REHEARSAL_HOLD_TTL_MS',
    default: '4000',
    parser: zDurationMs({ min: 1000, example: '4000' }),
    description: 'Hold expiry during the rehearsal (short, so abandoned holds expire while you watch).',
  },
  sweepIntervalMs: {
    env: 'REHEARSAL_SWEEP_INTERVAL_MS',
    default: '1000',
    parser: zDurationMs({ min: 100, example: '1000' }),
    description: 'How often the hold sweeper runs.',
  },
  countdownMs: {
    env: 'REHEARSAL_COUNTDOWN_MS',
    default: '3000',
    parser: zDurationMs({ min: 0, example: '3000' }),
    description: 'Time between everything running and "10:00".',
  },
  drainTimeoutMs: {
    env: 'REHEARSAL_DRAIN_TIMEOUT_MS',
    default: '180000',
    parser: zDurationMs({ min: 1000, example: '180000' }),
    description: 'How long to wait for every consumer to handle every event before the report says it did not.',
  },
  smtpPort: {
    env: 'REHEARSAL_SMTP_PORT',
    default: '2525',
    parser: zPort(),
    description:
      'Port of the local email provider that receives the confirmation emails (native mode; its own process, bench/provider).',
  },
  smtpAcceptDelayMs: {
    env: 'REHEARSAL_SMTP_ACCEPT_DELAY_MS',
    default: '100',
    parser: zDurationMs({ min: 0, example: '100' }),
    description:
      "How long the local email provider takes to accept each message (native mode): a real provider's 50–300 ms, so the email's latency in the report is one a ticketing company would see.",
  },
  keepRunning: {
    env: 'REHEARSAL_KEEP_CONSUMERS',
    default: 'no',
    parser: zString({ pattern: /^(yes|no)$/, expected: 'yes or no', example: 'no' }),
    description: 'yes leaves the consumers, monitor and email provider running after the report (stop with Ctrl-C).',
  },
  consumerInstances: {
    env: 'REHEARSAL_CONSUMER_INSTANCES',
    default: '1',
    parser: zInt({ min: 1, max: 4, example: '2' }),
    description:
      "Instances of each consumer the rehearsal runs (native mode), one group per consumer: with two or more, a consumer drill kills the instance owning the busiest partition and the others take its partitions over. Instance n of a consumer serves its metrics on the consumer's port + 100(n - 1) (9471, 9571, …). The redundant stack (docs/rehearsal.md) runs 2.",
  },
  drills: {
    env: 'REHEARSAL_DRILLS',
    default: '',
    parser: zDrills(),
    description: `Parts to kill with -9 during the crowd and bring back, in this order (${DRILL_TARGETS.join(', ')}, or all); the --drill flag overrides it. Empty: no drills. Native mode only.`,
  },
  drillDownMs: {
    env: 'REHEARSAL_DRILL_DOWN_MS',
    default: '0',
    parser: zDurationMs({ min: 0, max: 600_000, example: '5000' }),
    description:
      "How long a killed part stays down before the rehearsal's supervisor starts it again. 0: at once, as the supervisor does for any part that dies; longer rehearses a slower restart (a machine replaced, a page to on-call).",
  },
  drillSpacingMs: {
    env: 'REHEARSAL_DRILL_SPACING_MS',
    default: '30000',
    parser: zDurationMs({ min: 1000, example: '30000' }),
    description:
      'Time between the starts of two drills; with drills the crowd arrives over (drills + 1) × this instead of all at once, so every drill falls inside it.',
  },
  judgeFreshness: {
    env: 'REHEARSAL_JUDGE_FRESHNESS',
    default: 'yes',
    parser: zString({ pattern: /^(yes|no)$/, expected: 'yes or no', example: 'yes' }),
    description:
      'yes: the verdict judges freshness too (seat availability p99 within 1 s outside drills, every email within its deadline, every drill fresh again within its budget; docs/rehearsal.md). no: correctness only, the latencies and times to fresh still reported; for a machine far slower than the 2-core reference, and for tests of correctness that must not depend on timing.',
  },
  reportDir: {
    env: 'REHEARSAL_REPORT_DIR',
    default: '.stack/rehearsal',
    parser: zString({ minLength: 1, example: '.stack/rehearsal' }),
    description: 'Folder for rehearsal-<show>.txt, .json and .html (relative to the project root).',
  },
  stack: {
    env: 'REHEARSAL_STACK',
    default: 'native',
    parser: zEnum(['native', 'external'] as const),
    description:
      'native starts the native stack and every program itself; external (docker compose) starts nothing and reaches everything through the REHEARSAL_*_URL settings.',
  },
  seatAdminUrl: {
    env: 'REHEARSAL_SEAT_ADMIN_URL',
    default: '',
    parser: optionalUrl(['postgres', 'postgresql'], 'postgres://postgres:secret@db:5432/stagefront'),
    description:
      "External mode (required there): the seat database as its owner, read for the samples and the checks. Native mode uses the stack's.",
    secret: true,
  },
  consumerAdminUrl: {
    env: 'REHEARSAL_CONSUMER_ADMIN_URL',
    default: '',
    parser: optionalUrl(['postgres', 'postgresql'], 'postgres://postgres:secret@db:5432/stagefront_consumers'),
    description:
      "External mode (required there): the consumer database (inboxes, read models, ledger) as its owner. Native mode uses the stack's.",
    secret: true,
  },
  alertmanagerUrl: {
    env: 'REHEARSAL_ALERTMANAGER_URL',
    default: '',
    parser: optionalUrl(['http', 'https'], 'http://alertmanager:9093'),
    description:
      "External mode (required there): Alertmanager, sampled every second for the alerts of the run. Native mode uses the stack's.",
  },
  mailpitUrl: {
    env: 'REHEARSAL_MAILPIT_URL',
    default: '',
    parser: optionalUrl(['http', 'https'], 'http://mailpit:8025'),
    description:
      'External mode (required there): the Mailpit web API the confirmation emails are counted from (/api/v1/messages). Native mode runs its own email provider (REHEARSAL_SMTP_PORT).',
  },
  // Native mode: how the connector step and every program the rehearsal starts reach Kafka.
  ...kafkaSecuritySettings,
});

export type RehearsalConfig = Config<typeof rehearsalSettings.settings>;

const EXTERNAL_REQUIRED = ['seatAdminUrl', 'consumerAdminUrl', 'alertmanagerUrl', 'mailpitUrl'] as const;

/** The settings, and what external mode needs on top: every REHEARSAL_*_URL; drills only natively. */
export function parseRehearsalConfig(env: Readonly<Record<string, string | undefined>> = process.env): RehearsalConfig {
  const config = parseSettings(rehearsalSettings, env);
  const kafkaProblems = kafkaSecurityProblems(config);
  if (kafkaProblems.length > 0) throw new ConfigError(rehearsalSettings.program, kafkaProblems);
  if (config.stack !== 'external') return config;
  const problems = EXTERNAL_REQUIRED.filter((key) => config[key] === '').map((key) => {
    const setting = rehearsalSettings.settings[key];
    return `${setting.env} is required when REHEARSAL_STACK=external but not set: ${setting.description.replace(/^External mode \(required there\): /, '').replace(/ Native mode.*$/, '')} Set it to e.g. ${setting.parser.example}.`;
  });
  if (config.drills.length > 0) {
    problems.push(
      `REHEARSAL_DRILLS=${config.drills.join(',')} needs REHEARSAL_STACK=native: drills kill the native stack's processes, which an external stack does not have; unset REHEARSAL_DRILLS.`,
    );
  }
  if (config.consumerInstances > 1) {
    problems.push(
      `REHEARSAL_CONSUMER_INSTANCES=${config.consumerInstances} needs REHEARSAL_STACK=native: an external stack runs its own consumers (scale them there, e.g. docker compose up --scale); unset REHEARSAL_CONSUMER_INSTANCES.`,
    );
  }
  if (problems.length > 0) throw new ConfigError(rehearsalSettings.program, problems);
  return config;
}
