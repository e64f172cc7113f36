import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntilRunning } from '../../connectors/connect-client.js';
import { LOCAL_CONNECT_ENV, localConnectApi } from '../../stack/config.js';
import { waitFor } from '../../lib/wait.js';
import { seatId } from '../../seat-service/inventory.js';
import { stackStatus } from '../../stack/launcher.js';
import { isAlive } from '../../stack/processes.js';
import { type ConnectWorker, startConnectWorker } from '../support/connect-worker.js';
import { installLeakGuard } from '../support/leak-guard.js';
import { collectRecords, useSeatPipeline } from '../support/seat-pipeline.js';
import { adminQuery, requireStack } from '../support/stack.js';

requireStack();
installLeakGuard();

/** The stack's own Connect worker (pid and health): the test must leave it alone. */
async function sharedConnect(): Promise<{ pid: number | undefined; healthy: boolean }> {
  const status = (await stackStatus()).find((c) => c.name === 'connect');
  return { pid: status?.pid, healthy: status?.healthy ?? false };
}

describe('Kafka Connect killed with kill -9 in the middle of a stream', () => {
  const show = 'crash';
  // A worker of its own cluster (own REST port, group and storage topics): killing it disturbs no other test.
  let worker: ConnectWorker | undefined;
  beforeAll(async () => {
    worker = await startConnectWorker('crash_connect');
  });
  afterAll(async () => worker?.stop());
  const connect = (): ConnectWorker => {
    if (worker === undefined) throw new Error('the Connect worker of this file did not start (see its beforeAll)');
    return worker;
  };
  const pipeline = useSeatPipeline(show, { section: 'K', rows: 4, seatsPerRow: 25, priceCents: 3000 }, () => ({
    CONNECT_URL: connect().url,
    ...LOCAL_CONNECT_ENV,
  }));

  it('loses nothing: after a restart every outbox row is on Kafka (duplicates carry the same ce_id)', async () => {
    const sharedBefore = await sharedConnect();
    const collector = await collectRecords([pipeline().topics.seat]);
    try {
      const writeHolds = async (from: number, to: number) => {
        for (let i = from; i < to; i += 1) {
          const seat = seatId(show, 'K', Math.floor(i / 25) + 1, (i % 25) + 1);
          const held = await pipeline().service.hold({ showId: show, seatIds: [seat], buyerId: `crash-${i}` });
          if (held.status !== 'held') throw new Error(`${seat}: ${held.status}`);
        }
      };
      await writeHolds(0, 40);
      await waitFor(() => collector.records.length >= 20, {
        timeoutMs: 30_000,
        description: 'the stream to be flowing',
      });
      const pid = connect().pid();
      if (pid === undefined) throw new Error("the test's Connect worker is not running");
      process.kill(pid, 'SIGKILL');
      await writeHolds(40, 100); // written while Connect is dead
      await waitFor(() => !isAlive(pid), { timeoutMs: 10_000, description: 'the killed worker to be gone' });
      await connect().restart();
      expect(connect().pid()).not.toBe(pid);
      await waitUntilRunning(localConnectApi(connect().url), pipeline().connector.connectorName, 120_000);

      const ids = (await adminQuery(pipeline().adminUrl, 'select id from outbox')).rows.map((r) => r.id as string);
      expect(ids).toHaveLength(100);
      await waitFor(
        () => {
          const seen = new Set(collector.records.map((r) => r.headers.ce_id));
          return ids.every((id) => seen.has(id));
        },
        { timeoutMs: 120_000, intervalMs: 500, description: 'every outbox row on Kafka after the restart' },
      );
      const perId = new Map<string, Set<string>>();
      for (const record of collector.records) {
        const keys = perId.get(record.headers.ce_id ?? '') ?? new Set<string>();
        keys.add(`${record.key}|${record.value.toString('base64')}`);
        perId.set(record.headers.ce_id ?? '', keys);
      }
      // A duplicate is the same event again: same ce_id, same key, same bytes.
      expect([...perId.values()].every((variants) => variants.size === 1)).toBe(true);
      // The stack's own worker was never touched.
      expect(await sharedConnect()).toEqual({ pid: sharedBefore.pid, healthy: true });
      console.info(
        `connect crash: ${collector.records.length} records for ${ids.length} events (${collector.records.length - ids.length} duplicates)`,
      );
    } finally {
      await collector.stop();
    }
  }, 300_000);
});
