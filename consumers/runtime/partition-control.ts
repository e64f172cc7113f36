/** Builds the PartitionControl of one kafkajs batch: liveness, heartbeats, explicit commits. */
import { errorMessage } from '../../lib/errors.js';
import type { EachBatchPayload } from '../../lib/kafka.js';
import type { Logger } from '../../lib/logger.js';
import { sleep } from '../../lib/wait.js';
import type { PartitionControl } from './context.js';
import type { RuntimeEvents } from './lifecycle.js';

/** Long waits are cut into slices of this length with a heartbeat between them. */
const HEARTBEAT_SLICE_MS = 2_000;

export function partitionControl(payload: EachBatchPayload, stopSignal: AbortSignal, events: RuntimeEvents, logger: Logger): PartitionControl {
  const { batch, isRunning, isStale, resolveOffset, commitOffsetsIfNecessary } = payload;
  const { topic, partition } = batch;
  let abandoned = false;
  const active = (): boolean => !abandoned && !stopSignal.aborted && isRunning() && !isStale();
  /** A failed heartbeat or commit means a rebalance (or a lost coordinator): give the batch up uncommitted. */
  const abandon = (what: string, err: unknown): false => {
    abandoned = true;
    logger.warn({ topic, partition, error: errorMessage(err) }, `${what} failed; the batch is abandoned uncommitted and will be delivered again`);
    return false;
  };
  const heartbeat = async (): Promise<boolean> => {
    if (!active()) return false;
    try {
      await payload.heartbeat(); // kafkajs sends one at most every heartbeatInterval
      return true;
    } catch (err) {
      return abandon('heartbeat', err);
    }
  };
  return {
    topic,
    partition,
    active,
    heartbeat,
    async pause(ms) {
      const until = Date.now() + ms;
      for (;;) {
        if (!active()) return false;
        const left = until - Date.now();
        if (left <= 0) return true;
        try {
          await sleep(Math.min(left, HEARTBEAT_SLICE_MS), { signal: stopSignal });
        } catch {
          return false; // stopping
        }
        if (!(await heartbeat())) return false;
      }
    },
    async commitThrough(offset) {
      if (!active()) return false;
      const next = (BigInt(offset) + 1n).toString();
      try {
        await commitOffsetsIfNecessary({ topics: [{ topic, partitions: [{ partition, offset: next }] }] });
      } catch (err) {
        return abandon('offset commit', err);
      }
      resolveOffset(offset);
      const lag = BigInt(batch.highWatermark) - BigInt(next);
      events.emit('partitionProgress', { topic, partition, lag: Number(lag > 0n ? lag : 0n) });
      return true;
    },
  };
}
