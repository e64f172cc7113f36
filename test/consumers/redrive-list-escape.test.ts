/**
 * `npm run redrive -- list` on a dead letter whose headers carry terminal escape sequences: the
 * real command, against a real topic, prints them escaped, so a hostile producer cannot clear the
 * on-call's screen, retitle the window or forge lines of the listing.
 */
import { describe, expect, it } from 'vitest';
import { installLeakGuard } from '../support/leak-guard.js';
import { requireStack, uniqueName } from '../support/stack.js';
import { runChildProgram } from './helpers/child-consumer.js';
import { connectedProducer, createTopics, testKafka } from './helpers/stack-fixture.js';

const stack = requireStack();
installLeakGuard();

// Every control character but the newlines the listing itself writes.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069\u2028\u2029]/;

describe('redrive list', () => {
  it('escapes the control characters of the headers it prints', async () => {
    const name = uniqueName('redrive_escape');
    const topic = `${name}.seat.dlq`;
    const kafka = testKafka(stack, name);
    await createTopics(kafka, [topic], 1);
    const { producer, close } = await connectedProducer(kafka);
    await producer.send({
      topic,
      acks: -1,
      messages: [
        {
          key: 'k0',
          value: Buffer.from([0, 0, 0, 0, 1]),
          headers: {
            ce_id: '\u001b]0;owned\u0007\u009b2J',
            dlq_reason: 'data error\u001b[2J\u001b[H',
            dlq_source_topic: `${name}.seat\r\u001b[Kall clear: 0 dead letters`,
            dlq_dead_lettered_at: '2026-12-01T10:00:00.000Z\u202e',
            dlq_attempts: '3',
          },
        },
      ],
    });
    await close();

    const cli = await runChildProgram(
      'consumers/redrive/cli.ts',
      { KAFKA_BROKERS: stack.kafkaBrokers.join(','), LOG_LEVEL: 'warn' },
      ['list', topic],
    );
    expect(cli.code, cli.output).toBe(0);
    expect(cli.output).not.toMatch(CONTROL);
    expect(cli.output).toContain(
      `  data error\\x1b[2J\\x1b[H: 1 (from ${name}.seat\\x0d\\x1b[Kall clear: 0 dead letters; 2026-12-01T10:00:00.000Z\\u202e`,
    );
    expect(cli.output).toContain('e.g. ce_id \\x1b]0;owned\\x07\\x9b2J');
  });
});
