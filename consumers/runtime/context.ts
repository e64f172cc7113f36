/** What the processing functions share: the consumer's parts, and control over one partition's batch. */
import type { Producer } from '../../lib/kafka.js';
import type { Logger } from '../../lib/logger.js';
import type { Pool } from '../../lib/postgres.js';
import type { Registry } from '../../lib/schema-registry.js';
import type { RuntimeEvents } from './lifecycle.js';
import type { ConsumerDefinition, DeliveryPolicy } from './types.js';

export interface ProcessingContext {
  definition: ConsumerDefinition;
  registry: Registry;
  pool: Pool;
  producer: Producer;
  logger: Logger;
  policy: DeliveryPolicy;
  events: RuntimeEvents;
}

/** One partition's batch as the processing code sees it. */
export interface PartitionControl {
  topic: string;
  partition: number;
  /** False once the consumer stops or the partition was revoked or sought: abandon, uncommitted. */
  active(): boolean;
  /** Waits `ms` (heartbeating); false when the batch must be abandoned instead. */
  pause(ms: number): Promise<boolean>;
  /** Marks everything up to and including `offset` done and commits the next offset. */
  commitThrough(offset: string): Promise<void>;
}
