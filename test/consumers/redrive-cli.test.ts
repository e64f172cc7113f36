/**
 * `npm run redrive -- …`, one row per case, in order on one dead letter topic of four dead letters
 * (three reasons): list, each selector (reason, ce_id, partition and offset range) dry and with
 * --apply, a second --apply that leaves the redriven alone, --again, and bad input (each bad
 * argument's sentence: test/unit/lib/command-arguments.test.ts). Each row's exit
 * code, and what it left: the records on the source topic (read by the test's own client: the same
 * key, value and ce_id, the dlq_* headers gone, redriven_at added) and the dead letters marked in
 * the consumer database's redrives table. The command's own report is only checked for its wording.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readTopicRecords } from '../../consumers/redrive/read-dead-letters.js';
import { deadLetterTopicFor } from '../../events/catalogue.js';
import type { Kafka } from '../../lib/kafka.js';
import { installLeakGuard } from '../support/leak-guard.js';
import { requireStack, uniqueName } from '../support/stack.js';
import { runChildProgram } from './helpers/child-consumer.js';
import { connectedProducer, consumerDatabase, createTopics, testKafka } from './helpers/stack-fixture.js';

const stack = requireStack();
installLeakGuard();

const name = uniqueName('redrive_cli');
const source = `${name}.seat`;
const dlq = deadLetterTopicFor(source);
/** Offset in the dead letter topic → the dead letter written there. */
const DEAD = [
  { ceId: '00000000-0000-4000-8000-00000000000a', reason: 'data error', consumer: 'seat-heatmap' },
  { ceId: '00000000-0000-4000-8000-00000000000b', reason: 'data error', consumer: 'sales-ledger' },
  { ceId: '00000000-0000-4000-8000-00000000000c', reason: 'deadline exceeded', consumer: 'seat-heatmap' },
  { ceId: '00000000-0000-4000-8000-00000000000d', reason: 'invalid payload', consumer: 'seat-heatmap' },
] as const;
const ceId = (offset: number) => DEAD[offset]!.ceId;

let kafka: Kafka;
let db: Awaited<ReturnType<typeof consumerDatabase>>;

beforeAll(async () => {
  kafka = testKafka(stack, name);
  await createTopics(kafka, [source, dlq], 1);
  db = await consumerDatabase('redrive_cli');
  const { producer, close } = await connectedProducer(kafka);
  await producer.send({
    topic: dlq,
    acks: -1,
    messages: DEAD.map((dead, offset) => ({
      key: `seat-${offset}`,
      value: Buffer.from([0, 0, 0, 0, 1, offset]),
      headers: {
        ce_id: dead.ceId,
        ce_type: 'com.stagefront.seat.held',
        dlq_reason: dead.reason,
        dlq_error: 'test',
        dlq_source_topic: source,
        dlq_source_partition: '0',
        dlq_source_offset: String(100 + offset),
        dlq_dead_lettered_at: `2026-12-01T10:00:0${offset}.000Z`,
        dlq_attempts: '3',
        dlq_consumer: dead.consumer,
      },
    })),
  });
  await close();
}, 60_000);
afterAll(async () => db?.close());

/** The records on the source topic now, as the test's reader sees them. */
async function onSource(): Promise<{ key: string; value: string; ceId: string; headers: string[] }[]> {
  return (await readTopicRecords(kafka, source)).map((record) => ({
    key: record.key?.toString() ?? '',
    value: record.value?.toString('hex') ?? '',
    ceId: String(record.headers.ce_id),
    headers: Object.keys(record.headers).sort(),
  }));
}
const redriven = (...offsets: number[]) =>
  offsets.map((offset) => ({
    key: `seat-${offset}`,
    value: Buffer.from([0, 0, 0, 0, 1, offset]).toString('hex'),
    ceId: ceId(offset),
    headers: ['ce_id', 'ce_type', 'redriven_at'],
  }));
async function marks(): Promise<{ dlq_offset: string; event_id: string; times: number }[]> {
  const { rows } = await db.pool.query(
    'select dlq_offset::text, event_id, times from redrives where dlq_topic = $1 order by dlq_offset',
    [dlq],
  );
  return rows;
}
const marked = (...entries: [offset: number, times: number][]) =>
  entries.map(([offset, times]) => ({ dlq_offset: String(offset), event_id: ceId(offset), times }));

interface Row {
  name: string;
  args: string[];
  /** Without the consumer database (list needs none; redrive refuses). */
  noDatabase?: boolean;
  exit: number;
  says: RegExp[];
  /** The source topic and the redrives table afterwards. */
  source: ReturnType<typeof redriven>;
  marks: ReturnType<typeof marked>;
}

const ROWS: Row[] = [
  {
    name: 'list groups the dead letters by reason and sends nothing',
    args: ['list', dlq],
    noDatabase: true,
    exit: 0,
    says: [
      /: 4 dead letters/,
      / {2}data error: 2 \(from [^\n]*\n {4}failed in sales-ledger \(1\), seat-heatmap \(1\)\n/,
      / {2}deadline exceeded: 1 /,
      / {2}invalid payload: 1 /,
    ],
    source: [],
    marks: [],
  },
  {
    name: 'redrive --reason without --apply: a dry run, nothing sent or marked',
    args: ['redrive', dlq, '--reason', 'data error'],
    exit: 0,
    says: [/would redrive 2;/, /dry run: nothing was sent; add --apply to do it/],
    source: [],
    marks: [],
  },
  {
    name: "redrive --consumer --reason without --apply: that consumer's dead letters of the reason only",
    args: ['redrive', dlq, '--consumer', 'sales-ledger', '--reason', 'data error'],
    exit: 0,
    says: [/would redrive 1;/, /failed in sales-ledger \(1\)\n/],
    source: [],
    marks: [],
  },
  {
    name: 'redrive --ce-id --apply: that one back on its topic, marked once',
    args: ['redrive', dlq, '--ce-id', ceId(2), '--apply', '--by', 'test'],
    exit: 0,
    says: [/redrove 1;/],
    source: redriven(2),
    marks: marked([2, 1]),
  },
  {
    name: 'redrive --reason --apply: both of that reason, in offset order',
    args: ['redrive', dlq, '--reason', 'data error', '--apply'],
    exit: 0,
    says: [/redrove 2;/],
    source: redriven(2, 0, 1),
    marks: marked([0, 1], [1, 1], [2, 1]),
  },
  {
    name: 'the same --apply again: the redriven left alone, nothing sent',
    args: ['redrive', dlq, '--reason', 'data error', '--apply'],
    exit: 0,
    says: [/redrove 0; 2 redriven before and left alone \(--again to include them\)/],
    source: redriven(2, 0, 1),
    marks: marked([0, 1], [1, 1], [2, 1]),
  },
  {
    name: 'redrive --partition --from-offset --to-offset --apply: only that range',
    args: ['redrive', dlq, '--partition', '0', '--from-offset', '3', '--to-offset', '3', '--apply'],
    exit: 0,
    says: [/redrove 1;/],
    source: redriven(2, 0, 1, 3),
    marks: marked([0, 1], [1, 1], [2, 1], [3, 1]),
  },
  {
    name: 'redrive --again --apply: sent a second time, counted twice',
    args: ['redrive', dlq, '--ce-id', ceId(0), '--again', '--apply'],
    exit: 0,
    says: [/redrove 1;/],
    source: redriven(2, 0, 1, 3, 0),
    marks: marked([0, 2], [1, 1], [2, 1], [3, 1]),
  },
  {
    name: 'redrive without the consumer database: exit 2, the setting named, nothing sent',
    args: ['redrive', dlq, '--reason', 'invalid payload', '--apply'],
    noDatabase: true,
    exit: 2,
    says: [/CONSUMER_DATABASE_URL is required by redrive \(it records what was redriven\); set it/],
    source: redriven(2, 0, 1, 3, 0),
    marks: marked([0, 2], [1, 1], [2, 1], [3, 1]),
  },
  {
    name: 'no topic: exit 2 and the usage',
    args: ['redrive'],
    exit: 2,
    says: [/usage: redrive list <dlq topic>/],
    source: redriven(2, 0, 1, 3, 0),
    marks: marked([0, 2], [1, 1], [2, 1], [3, 1]),
  },
  {
    name: 'an unknown flag: exit 2, the flag named (a misspelt selector never means "everything")',
    args: ['redrive', dlq, '--reasons', 'data error', '--apply'],
    exit: 2,
    says: [/Unknown option '--reasons'.*; see the usage with redrive --help/],
    source: redriven(2, 0, 1, 3, 0),
    marks: marked([0, 2], [1, 1], [2, 1], [3, 1]),
  },
];

/** How many records the source topic holds (its high watermark): cheap, for rows that add none. */
async function sourceCount(): Promise<number> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    return (await admin.fetchTopicOffsets(source)).reduce((sum, p) => sum + Number(p.high), 0);
  } finally {
    await admin.disconnect();
  }
}

describe('npm run redrive -- <list|redrive>', () => {
  let previous = 0;
  for (const row of ROWS) {
    it(row.name, async () => {
      const env = {
        KAFKA_BROKERS: stack.kafkaBrokers.join(','),
        CONSUMER_DATABASE_URL: row.noDatabase ? '' : db.url,
        LOG_LEVEL: 'warn',
      };
      const run = await runChildProgram('consumers/redrive/cli.ts', env, row.args);
      expect(run.code, run.output).toBe(row.exit);
      for (const says of row.says) expect(run.output).toMatch(says);
      // Contents read (a group join) only when the row added records; otherwise the count must not move.
      expect(await sourceCount()).toBe(row.source.length);
      if (row.source.length !== previous) expect(await onSource()).toEqual(row.source);
      previous = row.source.length;
      expect(await marks()).toEqual(row.marks);
    });
  }
});
