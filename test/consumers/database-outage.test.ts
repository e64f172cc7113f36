/**
 * The consumer database goes away (its own cluster, stopped and started; the shared stack is
 * never touched). Back before the deadline: held and retried, nothing dead-lettered. Past the
 * deadline of a type whose policy is dead-letter: "deadline exceeded", and a redrive applies the
 * events exactly once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deadLetterTopicFor } from '../../events/catalogue.js';
import { waitFor } from '../../lib/wait.js';
import { redrive } from '../../consumers/redrive/redrive.js';
import { installLeakGuard } from '../support/leak-guard.js';
import { requireStack } from '../support/stack.js';
import { appliedRows, assertKeyOrder } from './helpers/counted-events.js';
import { runFaultDrill, startDrill } from './helpers/drill.js';
import { ownPostgres } from './helpers/own-postgres.js';
import { testLogger } from './helpers/stack-fixture.js';

const stack = requireStack();
installLeakGuard();
const postgres = ownPostgres();

beforeAll(() => postgres.start(), 120_000);
afterAll(() => postgres.stop());

describe('the consumer database goes away', () => {
  it('restarted under load: held and retried, every event applied once in key order, nothing dead-lettered', async () => {
    const drill = await startDrill({
      stack,
      prefix: 'outage_restart',
      adminUrl: postgres.adminUrl,
      counted: { whenLate: 'dead-letter' },
      policy: { deadlineMs: 300_000, lateRetryWindowMs: 5_000, deliveryLimit: 3, retryBaseMs: 100, retryCapMs: 2_000 },
    });
    await runFaultDrill(drill, {
      // 57P01 on the way down, then ECONNREFUSED or 57P03 while it starts.
      expectedCode: /^(57P01|57P03|ECONNREFUSED)$/,
      holdMs: 10_000,
      start: () => postgres.stop(),
      repair: () => postgres.start(),
    });
    await drill.close();
  });

  it('dead-letters an event type whose policy says so with "deadline exceeded" past the deadline, and a redrive applies them exactly once', async () => {
    const drill = await startDrill({
      stack,
      prefix: 'outage_long',
      adminUrl: postgres.adminUrl,
      counted: { whenLate: 'dead-letter' },
      policy: { deadlineMs: 5_000, lateRetryWindowMs: 1_000, deliveryLimit: 3, retryBaseMs: 200, retryCapMs: 1_000 },
    });
    let duplicates = 0;
    drill.events.on('duplicate', ({ count }) => (duplicates += count));
    await drill.startConsumer();
    const warm = await drill.load(drill.nextEvents(1), 0);
    await waitFor(async () => (await appliedRows(drill.pool, drill.name)).length === 1, {
      timeoutMs: 30_000,
      description: 'the first event applied',
    });
    await postgres.stop();
    const ids = await drill.load(drill.nextEvents(12), 0);
    const dead = await waitFor(
      async () => {
        const found = await drill.deadLetters();
        return found.length === 12 && found;
      },
      { timeoutMs: 60_000, description: '12 dead letters' },
    );
    expect(new Set(dead.map((d) => d.reason))).toEqual(new Set(['deadline exceeded']));
    expect(new Set(dead.map((d) => d.ceId))).toEqual(new Set(ids));
    await postgres.start();

    const dlq = deadLetterTopicFor(drill.topic);
    const options = {
      kafka: drill.kafka,
      pool: drill.pool,
      logger: testLogger('redrive'),
      deadLetterTopic: dlq,
      selection: { reasons: ['deadline exceeded'] },
      ratePerSecond: 200,
      redrivenBy: 'test',
    };
    const dryRun = await redrive({ ...options, apply: false });
    expect(dryRun.redriven).toHaveLength(12);
    expect(await appliedRows(drill.pool, drill.name)).toHaveLength(1);
    const applied = await redrive({ ...options, apply: true });
    expect(applied.redriven).toHaveLength(12);
    await waitFor(async () => (await appliedRows(drill.pool, drill.name)).length === 13, {
      timeoutMs: 60_000,
      description: 'the 12 redriven events applied',
    });

    const second = await redrive({ ...options, apply: true });
    expect(second.redriven).toHaveLength(0);
    expect(second.skipped).toHaveLength(12);
    const forced = await redrive({ ...options, apply: true, again: true });
    expect(forced.redriven).toHaveLength(12);
    await waitFor(() => duplicates >= 12, {
      timeoutMs: 60_000,
      description: 'the events redriven again skipped as duplicates',
    });
    const rows = await appliedRows(drill.pool, drill.name);
    expect(new Set(rows.map((r) => r.event_id))).toEqual(new Set([...warm, ...ids]));
    assertKeyOrder(rows);
    const recorded = await drill.pool.query('select count(*)::int as n, sum(times)::int as times from redrives');
    expect(recorded.rows[0]).toEqual({ n: 12, times: 24 });
    await drill.close();
  });
});
