/**
 * Records built to exhaust a consumer (valid CloudEvent headers, a registered schema id in the
 * wire format, an Avro body that claims 2^30 items or a terabyte string, or headers by the
 * hundred) meet a real consumer process with a small heap, restarted whenever it exits as a
 * supervisor would. Each is dead-lettered as "undecodable" with the limit and its setting named;
 * every good record around them, on the same partition, is applied exactly once; the process
 * never dies.
 */
import { randomUUID } from 'node:crypto';
import avro from 'avsc';
import { describe, expect, it } from 'vitest';
import type { IHeaders, Message } from '../../lib/kafka.js';
import { waitFor } from '../../lib/wait.js';
import {
  type CloudEventRecord,
  produceCloudEvents,
  produceRawMessages,
  registerTestSchema,
  routerHeaders,
} from '../support/cloudevent-records.js';
import { installLeakGuard } from '../support/leak-guard.js';
import { requireStack } from '../support/stack.js';
import { type ChildConsumer, startChildProgram } from './helpers/child-consumer.js';
import { COUNTED_TYPE, appliedRows, assertKeyOrder } from './helpers/counted-events.js';
import { startDrill } from './helpers/drill.js';

const stack = requireStack();
installLeakGuard();

const DELIVERY_LIMIT = 3;
/** Enough for a consumer; an allocation of 2^30 items fails at once. */
const CHILD_HEAP_MB = 160;
/** On the old code the consumer dies on the first hostile record, again and again: stop early. */
const DEATHS_TO_GIVE_UP = 3;

/** The counted fields, then one field of each shape the bounds check must see to. */
function hostileSchema(namespace: string): string {
  return JSON.stringify({
    type: 'record',
    name: 'Counted',
    namespace,
    fields: [
      { name: 'key', type: 'string' },
      { name: 'seq', type: 'int' },
      { name: 'behaviour', type: 'string', default: 'apply' },
      { name: 'tags', type: { type: 'array', items: 'string' }, default: [] },
      { name: 'labels', type: { type: 'map', values: 'string' }, default: {} },
      { name: 'blob', type: 'bytes', default: '' },
      { name: 'nothings', type: { type: 'array', items: 'null' }, default: [] },
      {
        name: 'nest',
        type: ['null', { type: 'record', name: 'Nest', fields: [{ name: 'inner', type: ['null', 'Nest'] }] }],
        default: null,
      },
    ],
  });
}

type HostileField = 'tags' | 'labels' | 'blob' | 'nothings' | 'nest';
const FIELDS: readonly HostileField[] = ['tags', 'labels', 'blob', 'nothings', 'nest'];

const long = (n: number): Buffer => avro.Type.forSchema('long').toBuffer(n);
const countedHead = avro.Type.forSchema({
  type: 'record',
  name: 'Head',
  fields: [
    { name: 'key', type: 'string' },
    { name: 'seq', type: 'int' },
    { name: 'behaviour', type: 'string' },
  ],
});

/** A wire-format value of the hostile schema: valid counted fields, `field` replaced by `bytes`, the others empty. */
function hostileValue(schemaId: number, key: string, field: HostileField, bytes: Buffer): Buffer {
  const wire = Buffer.alloc(5);
  wire.writeUInt32BE(schemaId, 1);
  const rest = FIELDS.map((name) => (name === field ? bytes : Buffer.from([0])));
  return Buffer.concat([wire, countedHead.toBuffer({ key, seq: 0, behaviour: 'apply' }), ...rest]);
}

interface Hostile {
  name: string;
  field?: HostileField;
  bytes?: Buffer;
  headers?: IHeaders;
  message: RegExp;
}

const HOSTILE: readonly Hostile[] = [
  {
    name: 'an array of 2^30 strings',
    field: 'tags',
    bytes: long(2 ** 30),
    message: /declares an array of 1073741824 items, over the limit of 131072 \(CONSUMER_MAX_COLLECTION_ITEMS\)/,
  },
  {
    name: 'an array of 2^30 nulls',
    field: 'nothings',
    bytes: long(2 ** 30),
    message: /declares an array of 1073741824 items, over the limit of \d+ \(CONSUMER_MAX_COLLECTION_ITEMS\)/,
  },
  {
    name: 'a negative block of -2^30 items and 2^40 bytes',
    field: 'tags',
    bytes: Buffer.concat([long(-(2 ** 30)), long(2 ** 40)]),
    message: /an array of 1073741824 items, over the limit .*\(CONSUMER_MAX_COLLECTION_ITEMS\)/,
  },
  {
    name: 'a block of 1 item, then one of 2^40',
    field: 'tags',
    bytes: Buffer.concat([long(1), long(1), Buffer.from('a'), long(2 ** 40)]),
    message: /an array of at least 1099511627777 items, over the limit/,
  },
  {
    name: 'a map of 2^40 entries',
    field: 'labels',
    bytes: long(2 ** 40),
    message: /declares a map of 1099511627776 entries, over the limit of \d+ \(CONSUMER_MAX_COLLECTION_ITEMS\)/,
  },
  {
    name: 'a string of 4 GiB',
    field: 'tags',
    bytes: Buffer.concat([long(1), long(2 ** 32)]),
    message: /declares a string of 4294967296 bytes, over the limit of 65536 \(CONSUMER_MAX_STRING_BYTES\)/,
  },
  {
    name: 'a bytes value of 1 TiB',
    field: 'blob',
    bytes: long(2 ** 40),
    message: /declares a bytes value of 1099511627776 bytes, over the limit of 65536 \(CONSUMER_MAX_STRING_BYTES\)/,
  },
  {
    name: 'a value nested 200000 deep',
    field: 'nest',
    bytes: Buffer.concat([Buffer.alloc(200_000, 0x02), Buffer.from([0])]),
    message: /more than 32 levels deep, over the limit of 32 \(CONSUMER_MAX_NESTING_DEPTH\)/,
  },
  {
    name: 'a union branch out of range',
    field: 'nest',
    bytes: long(7),
    message: /chooses branch 7 of a union of 2 branches/,
  },
  {
    name: 'a body cut short',
    field: 'blob',
    bytes: Buffer.concat([long(40), Buffer.from('only a few bytes')]),
    message: /truncated or corrupt: a bytes value at byte \d+ needs 40 bytes, 18 remain/,
  },
  {
    name: '300 headers',
    headers: Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`x-extra-${i}`, 'v'])),
    message: /the record has 309 headers, over the limit of 64 \(CONSUMER_MAX_HEADERS\)/,
  },
  {
    name: 'a header value of 512 KiB',
    headers: { 'x-huge': Buffer.alloc(512 * 1024, 0x61) },
    message: /headers have \d+ bytes \(names and values\), over the limit of 16384 \(CONSUMER_MAX_HEADER_BYTES\)/,
  },
];

/** What killed a child: V8's fatal line when it ran out of memory, else the end of its output. */
function causeOfDeath(child: ChildConsumer): string {
  const fatal = /FATAL ERROR: .*/.exec(child.output())?.[0];
  return `${child.process.signalCode ?? `exit ${child.process.exitCode}`}: ${fatal ?? child.output().slice(-400)}`;
}

/**
 * Runs the consumer program, restarting it whenever it exits, until `done` holds or it has died
 * DEATHS_TO_GIVE_UP times; then stops it.
 */
async function superviseUntil(
  program: string,
  env: Record<string, string>,
  done: () => Promise<boolean>,
): Promise<{ deaths: string[]; output: string }> {
  let child = startChildProgram(program, env);
  const deaths: string[] = [];
  await waitFor(
    async () => {
      if (child.process.exitCode !== null || child.process.signalCode !== null) {
        deaths.push(causeOfDeath(child));
        await child.close();
        if (deaths.length >= DEATHS_TO_GIVE_UP) return true;
        child = startChildProgram(program, env);
      }
      return done();
    },
    { timeoutMs: 180_000, intervalMs: 250, description: 'the good records applied' },
  );
  const output = child.output();
  await child.killHard(); // its effects are committed; a graceful leave would only cost the test time
  return { deaths, output };
}

function hostileMessage(hostile: Hostile, schemaId: number, i: number): Message & { headers: IHeaders } {
  const key = `k-hostile-${i}`;
  const value = hostileValue(schemaId, key, hostile.field ?? 'tags', hostile.bytes ?? Buffer.from([0]));
  const headers = {
    ...routerHeaders({ id: randomUUID(), type: COUNTED_TYPE, key, time: new Date().toISOString() }),
    ...hostile.headers,
  };
  return { key, value, headers };
}

describe('hostile records', () => {
  it('are dead-lettered as "undecodable", naming the limit, while the consumer lives on and every good record applies once', async () => {
    const drill = await startDrill({
      stack,
      prefix: 'hostile',
      policy: {
        deadlineMs: 300_000,
        lateRetryWindowMs: 5_000,
        deliveryLimit: DELIVERY_LIMIT,
        retryBaseMs: 100,
        retryCapMs: 1_000,
      },
      partitions: 1,
    });
    try {
      const hostileId = await registerTestSchema(drill.registry, `${drill.name}.Hostile`, hostileSchema(drill.name));
      // A good record of the hostile schema, every field used: the bounds pass what the schema allows.
      const rich: CloudEventRecord = {
        type: COUNTED_TYPE,
        key: 'k-rich',
        schemaId: hostileId,
        payload: {
          key: 'k-rich',
          seq: 1,
          behaviour: 'apply',
          tags: ['a', 'b'],
          labels: { x: 'y' },
          blob: Buffer.from('blob'),
          nothings: [null, null],
          nest: { inner: { inner: null } },
        },
      };
      const hostileMessages = HOSTILE.map((hostile, i) => hostileMessage(hostile, hostileId, i));
      // One partition, in this order: 10 good, the rich one, for each hostile record 2 good and the hostile one, 5 good.
      const goodIds = await produceCloudEvents(drill.producer, drill.registry, drill.topic, [
        ...drill.nextEvents(10),
        rich,
      ]);
      for (const hostile of hostileMessages) {
        goodIds.push(...(await produceCloudEvents(drill.producer, drill.registry, drill.topic, drill.nextEvents(2))));
        await produceRawMessages(drill.producer, drill.topic, [hostile]);
      }
      goodIds.push(...(await produceCloudEvents(drill.producer, drill.registry, drill.topic, drill.nextEvents(5))));

      const env = {
        COUNTED_NAME: drill.name,
        COUNTED_TOPIC: drill.topic,
        COUNTED_DATABASE_URL: drill.db.roleUrl,
        KAFKA_BROKERS: stack.kafkaBrokers.join(','),
        SCHEMA_REGISTRY_URL: stack.registryUrl,
        DELIVERY_LIMIT: String(DELIVERY_LIMIT),
        NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --max-old-space-size=${CHILD_HEAP_MB}`.trim(),
      };
      // The last good records come after every hostile one: once they are applied, the partition got past all of them.
      const applied = async () => (await appliedRows(drill.pool, drill.name)).length;
      const { deaths, output } = await superviseUntil(
        'test/consumers/helpers/counted-consumer-program.ts',
        env,
        async () => (await applied()) >= goodIds.length,
      );
      expect(
        deaths,
        `the consumer died ${deaths.length} times, ${await applied()} of ${goodIds.length} good records applied:\n${deaths.join('\n')}`,
      ).toEqual([]);
      expect(output).not.toMatch(/heap out of memory/i);

      const rows = await appliedRows(drill.pool, drill.name);
      expect(rows.map((row) => row.event_id).sort()).toEqual([...goodIds].sort()); // each once, none of the hostile ones
      assertKeyOrder(rows);
      const deadLetters = await drill.deadLetters();
      expect(deadLetters.map((dead) => dead.ceId)).toEqual(hostileMessages.map((m) => String(m.headers.ce_id)));
      for (const [i, dead] of deadLetters.entries()) {
        const hostile = HOSTILE[i]!;
        expect(dead.reason, hostile.name).toBe('undecodable');
        expect(dead.error, hostile.name).toMatch(hostile.message);
        expect(dead.attempts, hostile.name).toBe(DELIVERY_LIMIT);
        expect(dead.value, hostile.name).toEqual(hostileMessages[i]!.value);
      }
    } finally {
      await drill.close();
    }
  });
});
