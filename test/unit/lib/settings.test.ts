import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  ConfigError,
  configForLog,
  defineSettings,
  envExample,
  parseSettings,
  settingsHelp,
  settingsMarkdownTable,
  zBool,
  zBytes,
  zDurationMs,
  zEnum,
  zList,
  zPort,
  zUrl,
} from '../../../lib/settings.js';

const slotMonitor = defineSettings('slot-monitor', {
  databaseUrl: {
    env: 'SLOT_MONITOR_DATABASE_URL',
    default: undefined,
    parser: zUrl({ protocols: ['postgres', 'postgresql'], example: 'postgres://monitor@127.0.0.1:5432/seats' }),
    description: 'Connection string of the seat database',
    secret: true,
  },
  pollIntervalMs: {
    env: 'SLOT_MONITOR_POLL_INTERVAL_MS',
    default: '10000',
    parser: zDurationMs(),
    description: 'How often pg_replication_slots is read.',
  },
  checkOnly: {
    env: 'SLOT_MONITOR_CHECK_ONLY',
    default: 'false',
    parser: zBool(),
    description: 'Alert on a missing WAL cap instead of setting it',
  },
  maxSlotWalKeepSize: {
    env: 'SLOT_MONITOR_MAX_SLOT_WAL_KEEP_SIZE',
    default: '10GB',
    parser: zBytes(),
    description: 'The cap enforced on max_slot_wal_keep_size',
  },
  brokers: {
    env: 'KAFKA_BROKERS',
    default: '127.0.0.1:9092',
    parser: zList({ minItems: 1, example: '127.0.0.1:9092' }),
    description: 'Kafka bootstrap servers | comma separated',
  },
  metricsPort: { env: 'SLOT_MONITOR_METRICS_PORT', default: '9464', parser: zPort(), description: 'Port of /metrics' },
  logLevel: {
    env: 'LOG_LEVEL',
    default: 'info',
    parser: zEnum(['debug', 'info', 'warn', 'error']),
    description: 'Least severe level logged',
  },
});

const DB_URL = 'postgres://monitor:s3cret-pass@127.0.0.1:5432/seats';

describe('parseSettings', () => {
  it('fills in defaults, coerced to their types, with no optional fields', () => {
    const config = parseSettings(slotMonitor, { SLOT_MONITOR_DATABASE_URL: DB_URL });

    expect(config).toEqual({
      databaseUrl: DB_URL,
      pollIntervalMs: 10_000,
      checkOnly: false,
      maxSlotWalKeepSize: 10 * 1024 ** 3,
      brokers: ['127.0.0.1:9092'],
      metricsPort: 9464,
      logLevel: 'info',
    });
    expectTypeOf(config.pollIntervalMs).toEqualTypeOf<number>();
    expectTypeOf(config.checkOnly).toEqualTypeOf<boolean>();
    expectTypeOf(config.brokers).toEqualTypeOf<string[]>();
    expectTypeOf(config.logLevel).toEqualTypeOf<'debug' | 'info' | 'warn' | 'error'>();
  });

  it('coerces values from the environment', () => {
    const config = parseSettings(slotMonitor, {
      SLOT_MONITOR_DATABASE_URL: DB_URL,
      SLOT_MONITOR_POLL_INTERVAL_MS: ' 2500 ',
      SLOT_MONITOR_CHECK_ONLY: 'YES',
      SLOT_MONITOR_MAX_SLOT_WAL_KEEP_SIZE: '-1',
      KAFKA_BROKERS: 'a:9092, b:9092,,',
      SLOT_MONITOR_METRICS_PORT: '0',
      LOG_LEVEL: 'debug',
    });

    expect(config).toMatchObject({
      pollIntervalMs: 2500,
      checkOnly: true,
      maxSlotWalKeepSize: -1,
      brokers: ['a:9092', 'b:9092'],
      metricsPort: 0,
      logLevel: 'debug',
    });
  });

  it('treats an empty variable as unset', () => {
    const config = parseSettings(slotMonitor, { SLOT_MONITOR_DATABASE_URL: DB_URL, SLOT_MONITOR_POLL_INTERVAL_MS: '' });
    expect(config.pollIntervalMs).toBe(10_000);
  });

  it('reports one bad value as one sentence naming the variable, the value, what is expected and the fix', () => {
    const error = captureConfigError({ SLOT_MONITOR_DATABASE_URL: DB_URL, SLOT_MONITOR_POLL_INTERVAL_MS: 'abc' });

    expect(error.message).toBe(
      'SLOT_MONITOR_POLL_INTERVAL_MS="abc" is not valid: expected a whole number of milliseconds; ' +
        'set it to e.g. 5000 or unset it to use the default 10000.',
    );
    expect(error.program).toBe('slot-monitor');
  });

  it('reports every problem at once, one sentence each', () => {
    const error = captureConfigError({
      SLOT_MONITOR_POLL_INTERVAL_MS: '1.5',
      SLOT_MONITOR_CHECK_ONLY: 'maybe',
      SLOT_MONITOR_MAX_SLOT_WAL_KEEP_SIZE: '10gb',
      KAFKA_BROKERS: ' , ',
      SLOT_MONITOR_METRICS_PORT: '70000',
      LOG_LEVEL: 'loud',
    });

    expect(error.problems).toHaveLength(7);
    expect(error.message.split('\n')).toEqual(error.problems);
    const expectedStarts = [
      'SLOT_MONITOR_DATABASE_URL is required but not set: expected a URL starting with postgres:// or postgresql://',
      'SLOT_MONITOR_POLL_INTERVAL_MS="1.5" is not valid: expected a whole number of milliseconds',
      'SLOT_MONITOR_CHECK_ONLY="maybe" is not valid: expected true or false',
      'SLOT_MONITOR_MAX_SLOT_WAL_KEEP_SIZE="10gb" is not valid: expected a size with a unit',
      'KAFKA_BROKERS=" , " is not valid: expected a comma separated list (at least one)',
      'SLOT_MONITOR_METRICS_PORT="70000" is not valid: expected a TCP port from 0 to 65535',
      'LOG_LEVEL="loud" is not valid: expected one of debug, info, warn, error',
    ];
    expectedStarts.forEach((start, index) =>
      expect(error.problems[index]).toMatch(new RegExp(`^${escapeRegExp(start)}`)),
    );
    for (const problem of error.problems) {
      expect(problem).toMatch(/; set it to e\.g\. .+\.$/);
      expect(problem).not.toContain('\n');
    }
    expect(error.problems[0]).toContain('set it to e.g. postgres://monitor@127.0.0.1:5432/seats.');
    expect(error.problems[3]).toContain('or unset it to use the default 10GB.');
  });

  it('never echoes the value of a secret setting', () => {
    const error = captureConfigError({ SLOT_MONITOR_DATABASE_URL: 'mysql://root:hunter2@db/seats' });

    expect(error.message).not.toContain('hunter2');
    expect(error.message).toBe(
      'SLOT_MONITOR_DATABASE_URL (secret, value not shown) is not valid: expected a URL starting with postgres:// or ' +
        'postgresql://; set it to e.g. postgres://monitor@127.0.0.1:5432/seats.',
    );
  });

  it('reads process.env only when called', () => {
    process.env.SLOT_MONITOR_DATABASE_URL = DB_URL;
    try {
      expect(parseSettings(slotMonitor).databaseUrl).toBe(DB_URL);
    } finally {
      delete process.env.SLOT_MONITOR_DATABASE_URL;
    }
  });

  it('shows secrets as [secret] in the loggable view of the config', () => {
    const config = parseSettings(slotMonitor, { SLOT_MONITOR_DATABASE_URL: DB_URL });
    const shown = configForLog(slotMonitor, config);
    expect(shown.databaseUrl).toBe('[secret]');
    expect(shown.pollIntervalMs).toBe(10_000);
  });
});

describe('defineSettings', () => {
  const port = { default: '1', parser: zPort(), description: 'a port' };

  it('refuses a default its own parser rejects', () => {
    expect(() => defineSettings('p', { a: { ...port, env: 'A_PORT', default: 'eighty' } })).toThrow(
      'settings table of p, a: default "eighty" is not a TCP port',
    );
  });

  it('refuses an environment variable used twice', () => {
    expect(() => defineSettings('p', { a: { ...port, env: 'PORT' }, b: { ...port, env: 'PORT' } })).toThrow(
      'env PORT is used twice',
    );
  });

  it('refuses an environment variable name that is not UPPER_SNAKE_CASE', () => {
    expect(() => defineSettings('p', { a: { ...port, env: 'port' } })).toThrow('not an UPPER_SNAKE_CASE name');
  });
});

describe('documentation generated from the table', () => {
  const settings = Object.values(slotMonitor.settings);

  it('settingsHelp lists every variable with its default and description', () => {
    const help = settingsHelp(slotMonitor);
    for (const setting of settings) {
      expect(help).toContain(setting.env);
      expect(help).toContain(setting.description);
    }
    expect(help).toMatch(/SLOT_MONITOR_POLL_INTERVAL_MS\s+default 10000\n/);
    expect(help).toMatch(/SLOT_MONITOR_DATABASE_URL\s+required, secret\n/);
  });

  it('envExample documents every variable: defaults commented out, required ones to fill in', () => {
    const example = envExample(slotMonitor);
    for (const setting of settings) expect(example).toContain(setting.description);
    expect(example).toContain('\n# SLOT_MONITOR_POLL_INTERVAL_MS=10000\n');
    expect(example).toContain('\n# KAFKA_BROKERS=127.0.0.1:9092\n');
    expect(example).toMatch(/\nSLOT_MONITOR_DATABASE_URL=\n/);
    expect(example).toContain('Required. Secret');
  });

  it('settingsMarkdownTable has one row per setting and escapes pipes', () => {
    const table = settingsMarkdownTable(slotMonitor);
    const lines = table.trimEnd().split('\n');
    expect(lines[0]).toBe('| setting | env var | default | description |');
    expect(lines).toHaveLength(2 + settings.length);
    expect(table).toContain('| pollIntervalMs | `SLOT_MONITOR_POLL_INTERVAL_MS` | `10000` | How often');
    expect(table).toContain('| databaseUrl | `SLOT_MONITOR_DATABASE_URL` | *required* |');
    expect(table).toContain('Kafka bootstrap servers \\| comma separated');
    for (const line of lines) expect(line.split(/(?<!\\)\|/)).toHaveLength(6);
  });
});

function captureConfigError(env: Record<string, string>): ConfigError {
  try {
    parseSettings(slotMonitor, env);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
