/**
 * The "Writing a consumer" guide's complete example (examples/seat-watch/): the guide quotes each
 * file whole and unchanged, the files type-check, and the example runs as a program against a
 * real seat pipeline (seat service → outbox → Debezium → Kafka): every seat event counted once,
 * a redelivery of everything counts nothing twice, and its reset command starts it over.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createPool } from '../../lib/postgres.js';
import { waitFor } from '../../lib/wait.js';
import { seatId } from '../../seat-service/inventory.js';
import { installLeakGuard, track } from '../support/leak-guard.js';
import { useSeatPipeline } from '../support/seat-pipeline.js';
import { createTestDatabase, requireStack, uniqueName } from '../support/stack.js';
import { runChildProgram, startChildProgram } from './helpers/child-consumer.js';
import { metricValue, scrapeMetrics } from './helpers/metrics.js';
import { testKafka, testLogger } from './helpers/stack-fixture.js';

const GUIDE = 'docs/writing-a-consumer.md';
const EXAMPLE = 'examples/seat-watch';
const QUOTED_FILE = /<!-- file: (\S+) -->\n```\w*\n([\s\S]*?)```\n/g;

async function filesUnder(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { withFileTypes: true, recursive: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => relative('.', join(entry.parentPath, entry.name)))
    .sort();
}

describe('the guide quotes its example whole', () => {
  it('every file of the example is in the guide between markers, byte for byte', async () => {
    const guide = await readFile(GUIDE, 'utf8');
    const quoted = new Map([...guide.matchAll(QUOTED_FILE)].map((match) => [match[1] ?? '', match[2] ?? '']));
    const files = await filesUnder(EXAMPLE);
    expect([...quoted.keys()].filter((path) => path.startsWith(EXAMPLE)).sort()).toEqual(files);
    for (const path of files)
      expect(quoted.get(path), `${GUIDE}'s copy of ${path} (copy the file into the guide again)`).toBe(
        await readFile(path, 'utf8'),
      );
  });

  it('the example type-checks on its own (what it imports from the runtime included)', async () => {
    const config = `tsconfig.guide-example-${process.pid}.json`;
    await writeFile(config, JSON.stringify({ extends: './tsconfig.json', include: [EXAMPLE] }));
    try {
      const child = spawn(process.execPath, ['node_modules/typescript/bin/tsc', '--noEmit', '-p', config], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const [code] = (await once(child, 'exit')) as [number | null];
      expect(output).toBe('');
      expect(code).toBe(0);
    } finally {
      await rm(config, { force: true });
    }
  });
});

describe('the guide example runs against the stack', () => {
  const stack = requireStack();
  installLeakGuard();
  const show = 'watch1';
  const pipeline = useSeatPipeline(show, { section: 'A', rows: 2, seatsPerRow: 4, priceCents: 5000 });

  it('counts every seat event of a small on-sale once, a redelivery of all of them changes nothing, and reset starts it over', async () => {
    const { service, connector, topics, adminUrl } = pipeline();
    const seat = (row: number, n: number) => seatId(show, 'A', row, n);
    const first = await service.hold({ showId: show, seatIds: [seat(1, 1), seat(1, 2)], buyerId: 'b1' });
    const second = await service.hold({ showId: show, seatIds: [seat(2, 1)], buyerId: 'b2' });
    const third = await service.hold({ showId: show, seatIds: [seat(2, 2), seat(2, 3)], buyerId: 'b3' });
    if (first.status !== 'held' || second.status !== 'held' || third.status !== 'held')
      throw new Error('expected three holds');
    expect((await service.confirm({ holdId: first.holdId, buyerEmail: 'b1@example.test' })).status).toBe('confirmed');
    expect((await service.release(second.holdId)).status).toBe('released');
    expect((await service.confirm({ holdId: third.holdId, buyerEmail: 'b3@example.test' })).status).toBe('confirmed');
    const outbox = await createPool({
      connectionString: adminUrl,
      applicationName: 'guide-example',
      logger: testLogger('pool'),
      max: 1,
    });
    const closeOutbox = track('outbox pool', () => outbox.end());
    const seatEvents = (
      await outbox.query<{ type: string; n: number }>(
        `select type, count(*)::int as n from outbox where aggregatetype = 'seat' group by type`,
      )
    ).rows;
    await closeOutbox();
    const published = Object.fromEntries(seatEvents.map((row) => [row.type, row.n]));
    expect(published).toEqual({
      'com.stagefront.seat.held': 5,
      'com.stagefront.seat.released': 1,
      'com.stagefront.seat.sold': 4,
    });

    const database = await createTestDatabase('seatwatch');
    const pool = createPool({
      connectionString: database.url,
      applicationName: 'guide-example',
      logger: testLogger('pool'),
      max: 2,
    });
    const closeDatabase = track(`database ${database.name}`, async () => {
      await pool.end();
      await database.drop();
    });
    const group = uniqueName('seat-watch');
    const env = {
      CONSUMER_DATABASE_URL: database.url,
      KAFKA_BROKERS: stack.kafkaBrokers.join(','),
      SCHEMA_REGISTRY_URL: stack.registryUrl,
      TOPIC_PREFIX: connector.topicPrefix,
      CONSUMER_GROUP_ID: group,
      METRICS_PORT: '0',
      LOG_LEVEL: 'info',
    };
    const activity = async () =>
      (await pool.query(`select show_id, section, held::int, hold_ended::int, sold::int from seat_watch.show_activity`))
        .rows;
    const expected = [{ show_id: show, section: 'A', held: 5, hold_ended: 1, sold: 4 }];

    const run = async (description: string, done: (metrics: string) => boolean): Promise<string> => {
      const child = startChildProgram(`${EXAMPLE}/main.ts`, env);
      try {
        const url = await waitFor(() => /"metrics":"(http:\/\/[^"]+)\/metrics"/.exec(child.output())?.[1], {
          timeoutMs: 60_000,
          description: 'seat watch to log its metrics URL',
        });
        return await waitFor(
          async () => {
            const metrics = await scrapeMetrics(url);
            return done(metrics) && metrics;
          },
          { timeoutMs: 60_000, description },
        );
      } finally {
        await child.close();
      }
    };
    const processed = (metrics: string) => metricValue(metrics, 'consumer_events_processed_total', { consumer: group });
    const duplicates = (metrics: string) =>
      metricValue(metrics, 'consumer_duplicates_skipped_total', { consumer: group });

    const firstRun = await run('all 10 seat events counted', (metrics) => processed(metrics) === 10);
    expect(duplicates(firstRun)).toBe(0);
    expect(await activity()).toEqual(expected);
    const migrations = await pool.query(`select version, name from seat_watch.schema_migrations`);
    expect(migrations.rows).toEqual([{ version: 1, name: 'show_activity' }]);

    const admin = testKafka(stack, group).admin();
    await admin.connect();
    await admin.resetOffsets({ groupId: group, topic: topics.seat, earliest: true }).finally(() => admin.disconnect());
    const secondRun = await run(
      'all 10 seat events delivered again and skipped',
      (metrics) => duplicates(metrics) === 10,
    );
    expect(processed(secondRun)).toBe(0);
    expect(await activity()).toEqual(expected);

    // Starting over (the guide's section 7): reset puts the group back and drops the read model
    // and the inbox rows together; without --yes (a dry run, exit 0), or with an instance in the group
    // (exit 1), it changes nothing.
    const reset = (...args: string[]) => runChildProgram(`${EXAMPLE}/main.ts`, env, ['reset', ...args]);
    const plan = await reset();
    expect(plan.code, plan.output).toBe(0);
    expect(plan.output).toContain(`group ${group}`);
    expect(plan.output).toContain(`${topics.seat}: `);
    expect(plan.output).toContain('schema seat_watch (its read model and migration record): dropped');
    expect(plan.output).toContain('Run it again with --yes');
    expect(await activity()).toEqual(expected);
    const running = startChildProgram(`${EXAMPLE}/main.ts`, env);
    try {
      // Once the instance is in the group the plan says so (a dry run: nothing changes either way)...
      await waitFor(async () => (await reset()).output.includes('refused:'), {
        timeoutMs: 60_000,
        intervalMs: 500,
        description: 'reset to see seat watch in its group',
      });
      // ...and reset with --yes refuses while it stays there.
      const refused = await reset('--yes');
      expect(refused.output).toContain('refused: 1 instance(s) of the consumer are in group');
      expect(refused.code).toBe(1);
    } finally {
      await running.close();
    }
    expect(await activity()).toEqual(expected);
    const done = await reset('--yes');
    expect(done.code, done.output).toBe(0);
    // What reset did, read from the database's catalogue and from the group's committed offsets.
    const left = await pool.query(
      `select (select count(*)::int from pg_namespace where nspname = 'seat_watch') as schemas, (select count(*)::int from inbox) as inbox`,
    );
    expect(left.rows).toEqual([{ schemas: 0, inbox: 0 }]);
    const offsetsAdmin = testKafka(stack, `${group}-check`).admin();
    await offsetsAdmin.connect();
    try {
      const earliest = new Map(
        (await offsetsAdmin.fetchTopicOffsets(topics.seat)).map((p) => [p.partition, Number(p.low)]),
      );
      const [committed] = await offsetsAdmin.fetchOffsets({ groupId: group, topics: [topics.seat] });
      expect(committed?.partitions.length).toBe(earliest.size);
      for (const p of committed?.partitions ?? [])
        expect(Number(p.offset), `partition ${p.partition}`).toBe(earliest.get(p.partition));
    } finally {
      await offsetsAdmin.disconnect();
    }
    const thirdRun = await run(
      'all 10 seat events counted again after the reset',
      (metrics) => processed(metrics) === 10,
    );
    expect(duplicates(thirdRun)).toBe(0);
    expect(await activity()).toEqual(expected);
    await closeDatabase();
  });
});
