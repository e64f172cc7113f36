/**
 * Every program and tool that speaks to Kafka takes the KAFKA_SECURITY_* settings (one fragment,
 * lib/kafka-security.ts) and hands them to its Kafka client.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { consumerSettings } from '../../../consumers/runtime/settings.js';
import { seatWatchSettings } from '../../../examples/seat-watch/consumer.js';
import { kafkaSecurityEnv, kafkaSecuritySettings } from '../../../lib/kafka-security.js';
import { type SettingsDefinition, type SettingsTable, parseSettings } from '../../../lib/settings.js';
import { parseRehearsalConfig } from '../../../rehearsal/settings.js';
import { PROGRAM_SETTINGS } from '../../../scripts/readme-settings.js';
import { projectRoot } from '../../../stack/config.js';

/**
 * The programs that reach Kafka: the consumers, redrive, the connector command (it creates the event
 * topics), the rehearsal (the connector step and the consumers it starts) and the bench. Slot
 * recovery and reconciliation read the databases and Connect only.
 */
const KAFKA_PROGRAMS = [
  'bench',
  'confirmation-email',
  'connector',
  'redrive',
  'rehearsal',
  'sales-ledger',
  'seat-availability',
  'seat-watch',
];
const speaksToKafka = (name: string): boolean => KAFKA_PROGRAMS.includes(name);

const FRAGMENT = Object.entries(kafkaSecuritySettings);

describe('the KAFKA_SECURITY_* settings in every program that speaks to Kafka', () => {
  const tables: [string, SettingsDefinition<SettingsTable>][] = [
    ...Object.entries(PROGRAM_SETTINGS),
    // The guide's example consumer.
    ['seat-watch', seatWatchSettings],
  ];

  it('every table with KAFKA_BROKERS is of a program that speaks to Kafka, and each of those has a table', () => {
    for (const [name, def] of tables)
      if (Object.values(def.settings).some((s) => s.env === 'KAFKA_BROKERS'))
        expect(KAFKA_PROGRAMS, name).toContain(name);
    expect(KAFKA_PROGRAMS.filter((name) => !tables.some(([n]) => n === name))).toEqual([]);
  });

  it.each(tables.filter(([name]) => speaksToKafka(name)))(
    '%s has each of them, as the fragment defines it',
    (_name, def) => {
      for (const [key, setting] of FRAGMENT) expect(def.settings[key], `${setting.env}`).toBe(setting);
    },
  );

  it('every consumer, and so every one npm run new-consumer writes, gets them from consumerSettings', () => {
    const table = consumerSettings({
      groupId: 'g',
      metricsPort: '9999',
      deadlineMs: '1000',
      whenLate: 'keep-retrying',
    }) as SettingsTable;
    for (const [key, setting] of FRAGMENT) expect(table[key]).toBe(setting);
  });

  it('the programs that do not speak to Kafka do not take them', () => {
    for (const [name, def] of tables.filter(([n]) => !speaksToKafka(n))) {
      for (const [, setting] of FRAGMENT)
        expect(
          Object.values(def.settings).map((s) => s.env),
          name,
        ).not.toContain(setting.env);
    }
  });
});

/** The text of the call's parentheses, from `createKafka(` to its closing one. */
function callArguments(source: string, start: number): string {
  let depth = 0;
  for (let i = start; i < source.length; i += 1) {
    if (source[i] === '(') depth += 1;
    if (source[i] === ')' && --depth === 0) return source.slice(start, i + 1);
  }
  return source.slice(start);
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

describe('every Kafka client a program creates', () => {
  it("passes the program's security to createKafka (outside the tests and lib/kafka.ts itself)", () => {
    const dirs = [
      'bench',
      'compose',
      'connectors',
      'consumers',
      'deploy',
      'events',
      'examples',
      'monitors',
      'rehearsal',
      'scripts',
      'seat-service',
      'stack',
    ];
    const calls = dirs
      .flatMap((dir) => sourceFiles(join(projectRoot, dir)))
      .flatMap((file) => {
        const source = readFileSync(file, 'utf8');
        return [...source.matchAll(/\bcreateKafka\(/g)].map((m) => ({
          where: relative(projectRoot, file),
          args: callArguments(source, (m.index ?? 0) + 'createKafka'.length),
        }));
      });
    expect(calls.length, 'createKafka calls found').toBeGreaterThanOrEqual(4);
    for (const call of calls) expect(call.args, `${call.where}: createKafka${call.args}`).toMatch(/\bsecurity\b/);
  });
});

describe('a program that starts another hands it the same settings', () => {
  it('kafkaSecurityEnv gives back the variables the settings were parsed from', () => {
    const env = {
      KAFKA_SECURITY_PROTOCOL: 'sasl_ssl',
      KAFKA_SASL_MECHANISM: 'scram-sha-256',
      KAFKA_SASL_USERNAME: 'bench',
      KAFKA_SASL_PASSWORD: 'pw',
      KAFKA_TLS_CA_FILE: '/ca.pem',
    };
    const config = parseSettings(PROGRAM_SETTINGS.bench as SettingsDefinition<typeof kafkaSecuritySettings>, env);
    expect(kafkaSecurityEnv(config)).toEqual(env);
  });

  it('the rehearsal refuses a contradiction in them before it starts anything', () => {
    expect(() => parseRehearsalConfig({ KAFKA_SECURITY_PROTOCOL: 'sasl_ssl' })).toThrow(
      /KAFKA_SASL_USERNAME is not set/,
    );
    expect(() => parseRehearsalConfig({ KAFKA_SASL_USERNAME: 'rehearsal' })).toThrow(
      /KAFKA_SECURITY_PROTOCOL is plaintext, which sends no credentials/,
    );
  });
});
