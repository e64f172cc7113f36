/** Builds the PartitionControl of one kafkajs batch: liveness, heartbeating pauses, explicit commits. */
import type { EachBatchPayload } from '../../lib/kafka.js';
import { sleep } from '../../lib/wait.js';
import type { PartitionControl } from './context.js';
import type { RuntimeEvents } from './lifecycle.js';

/** Long waits are cut into slices of this length with a heartbeat between them. */
const HEARTBEAT_SLICE_MS = 2_000;

export function partitionControl(payload: EachBatchPayload, stopSignal: AbortSignal, events: RuntimeEvents): PartitionControl {
  const { batch, isRunning, isStale, heartbeat, resolveOffset, commitOffsetsIfNecessary } = payload;
  const { topic, partition } = batch;
  const active = (): boolean => !stopSignal.aborted && isRunning() && !isStale();
  return {
    topic,
    partition,
    active,
    async pause(ms) {
      const until = Date.now() + ms;
      for (;;) {
        if (!active()) return false;
        const left = until - Date.now();
        if (left <= 0) return true;
        try {
          await sleep(Math.min(left, HEARTBEAT_SLICE_MS), { signal: stopSignal });
          await heartbeat();
        } catch {
          return false; // stopping, or the group is rebalancing: abandon the batch uncommitted
        }
      }
    },
    async commitThrough(offset) {
      resolveOffset(offset);
      const next = (BigInt(offset) + 1n).toString();
      await commitOffsetsIfNecessary({ topics: [{ topic, partitions: [{ partition, offset: next }] }] });
      const lag = BigInt(batch.highWatermark) - BigInt(next);
      events.emit('partitionProgress', { topic, partition, lag: Number(lag > 0n ? lag : 0n) });
    },
  };
}
