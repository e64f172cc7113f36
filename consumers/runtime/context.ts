/** What the processing functions share: the consumer's parts, and control over one partition's batch. */
import type { Producer } from '../../lib/kafka.js';
import type { Logger } from '../../lib/logger.js';
import type { Pool } from '../../lib/postgres.js';
import type { Registry } from '../../lib/schema-registry.js';
import type { DecodeLimits } from './decode-limits.js';
import type { AttemptCounts } from './delivery-attempts.js';
import type { RuntimeEvents } from './lifecycle.js';
import type { PartitionStates } from './partition-state.js';
import type { ConsumerDefinition, DeliveryPolicy } from './types.js';

export interface ProcessingContext {
  definition: ConsumerDefinition;
  /** The Kafka consumer group (messaging.consumer.group.name of the event spans). */
  groupId: string;
  registry: Registry;
  pool: Pool;
  /** The durable attempt counts, and the finishes the database has not taken yet (they outlive a rebalance). */
  attempts: AttemptCounts;
  producer: Producer;
  logger: Logger;
  policy: DeliveryPolicy;
  /** How much of a record is decoded. */
  decodeLimits: DecodeLimits;
  events: RuntimeEvents;
  /** This consumer instance's claim token: its own open claims can be stamped or retried at once. */
  claimToken: string;
  /** Event ids whose external effect was performed but not yet stamped: a retry stamps, never performs again. */
  performedNotStamped: Set<string>;
  /** Each assigned partition's facts (committed since the join, counts written, a hold and its timer). */
  partitions: PartitionStates;
}

/** One partition's batch as the processing code sees it. */
export interface PartitionControl {
  topic: string;
  partition: number;
  /** False once the consumer stops, the partition was revoked or sought, or a commit or heartbeat failed: abandon, uncommitted. */
  active(): boolean;
  /** Stops fetching the partition (kafkajs's pause); returns the function that resumes it. */
  pause(): () => void;
  /** Tells the group coordinator this member is alive; false when the batch must be abandoned. */
  heartbeat(): Promise<boolean>;
  /** Marks everything up to and including `offset` done and commits the next offset; false (batch abandoned) when the commit fails. */
  commitThrough(offset: string): Promise<boolean>;
}
