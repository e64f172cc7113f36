/** Builds the PartitionControl of one kafkajs batch: liveness, heartbeats, explicit commits, pause. */
import { errorMessage } from '../../lib/errors.js';
import type { EachBatchPayload } from '../../lib/kafka.js';
import type { Logger } from '../../lib/logger.js';
import type { PartitionControl } from './context.js';
import type { RuntimeEvents } from './lifecycle.js';

function behind(highWatermark: string, nextOffset: string): number {
  const lag = BigInt(highWatermark) - BigInt(nextOffset);
  return Number(lag > 0n ? lag : 0n);
}

export function partitionControl(
  payload: EachBatchPayload,
  stopSignal: AbortSignal,
  events: RuntimeEvents,
  logger: Logger,
): PartitionControl {
  const { batch, isRunning, isStale, resolveOffset, commitOffsetsIfNecessary } = payload;
  const { topic, partition } = batch;
  // Every batch says how far behind its partition is, a held one included (it commits nothing).
  const first = batch.messages[0];
  if (first !== undefined)
    events.emit('partitionProgress', { topic, partition, lag: behind(batch.highWatermark, first.offset) });
  let abandoned = false;
  const active = (): boolean => !abandoned && !stopSignal.aborted && isRunning() && !isStale();
  /** A failed heartbeat or commit means a rebalance (or a lost coordinator): give the batch up uncommitted. */
  const abandon = (what: string, err: unknown): false => {
    abandoned = true;
    logger.warn(
      { topic, partition, error: errorMessage(err) },
      `${what} failed; the batch is abandoned uncommitted and will be delivered again`,
    );
    return false;
  };
  return {
    topic,
    partition,
    active,
    async heartbeat() {
      if (!active()) return false;
      try {
        await payload.heartbeat(); // kafkajs sends one at most every heartbeatInterval
        return true;
      } catch (err) {
        return abandon('heartbeat', err);
      }
    },
    pause: () => payload.pause(),
    async commitThrough(offset) {
      if (!active()) return false;
      const next = (BigInt(offset) + 1n).toString();
      try {
        await commitOffsetsIfNecessary({ topics: [{ topic, partitions: [{ partition, offset: next }] }] });
      } catch (err) {
        return abandon('offset commit', err);
      }
      resolveOffset(offset);
      events.emit('partitionProgress', { topic, partition, lag: behind(batch.highWatermark, next) });
      return true;
    },
  };
}
