/**
 * Every program that speaks to Kafka, started as a user starts it, with KAFKA_SECURITY_PROTOCOL=
 * sasl_ssl and no user: bad configuration (exit 2) naming KAFKA_SASL_USERNAME and the fix, before
 * it connects to anything (the brokers, the databases and Connect given are addresses nothing
 * listens on), the password never echoed.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../stack/config.js';
import { runChildProgram } from './helpers/child-consumer.js';

const NOWHERE = {
  KAFKA_BROKERS: '127.0.0.1:1',
  CONSUMER_DATABASE_URL: 'postgres://nobody:nothing@127.0.0.1:1/nothing',
  CONNECTOR_SEAT_DB_URL: 'postgres://nobody:nothing@127.0.0.1:1/nothing',
  CONNECT_URL: 'http://127.0.0.1:1',
  SCHEMA_REGISTRY_URL: 'http://127.0.0.1:1/apis/ccompat/v7',
  LOG_LEVEL: 'silent',
  REHEARSAL_STACK: 'external',
};
const PASSWORD = 'never-echo-this-password';

/**
 * One consumer stands for all: they share the program frame (consumers/runtime/program.ts) and get
 * the settings from consumerSettings (test/unit/lib/kafka-security-programs.test.ts); each start
 * costs seconds of CPU.
 */
const PROGRAMS: [string, string, string[]][] = [
  ['seat-availability', 'consumers/seat-availability/main.ts', []],
  ['redrive', 'consumers/redrive/cli.ts', ['list', 'stagefront.seat.dlq']],
  ['connector', 'connectors/cli.ts', ['apply']],
  // External mode and no scenario the bench knows: without the check, each stops at its next one
  // (the REHEARSAL_*_URL settings, the scenario's name) instead of running on the shared stack.
  ['rehearsal', 'rehearsal/main.ts', []],
  ['bench', 'bench/run.ts', ['no-such-scenario']],
];

describe.concurrent('a program told sasl_ssl without a user', () => {
  it.each(PROGRAMS)('%s stops at start naming KAFKA_SASL_USERNAME', async (program, entry, args) => {
    const { code, output } = await runChildProgram(
      join(projectRoot, entry),
      { ...NOWHERE, KAFKA_SECURITY_PROTOCOL: 'sasl_ssl', KAFKA_SASL_PASSWORD: PASSWORD },
      args,
    );
    expect(output).toContain(`${program}: bad configuration`);
    expect(output).toContain(
      "KAFKA_SECURITY_PROTOCOL is sasl_ssl but KAFKA_SASL_USERNAME is not set: set it to this program's Kafka user.",
    );
    expect(output).not.toContain(PASSWORD);
    expect(code, output).toBe(2);
  });
});
