/**
 * The consumer runtime's test kit, for the authors of consumers: run a consumer definition over
 * events described by type and payload, against a real Postgres database and without Kafka or
 * the registry server, and see what it applied, retried and dead-lettered and what it committed.
 * Its own entry (not in `consumers/runtime/index.ts`): only tests import it. The guide:
 * docs/writing-a-consumer.md, section 10.
 */
export {
  ConsumerTestKit,
  type ConsumerTestKitOptions,
  type DeadLetter,
  type HandlerCall,
  type InboxRow,
  type RunReport,
  TEST_POLICY,
  type TestConsumerProcess,
  type TestInput,
} from './kit.js';
export { type RawTestRecord, type TestEvent, routerHeaders } from './records.js';
export { RecordingPartitionControl, type RecordingProducer, type SentDeadLetter } from './partition.js';
export { type InProcessRegistry, inProcessRegistry } from './registry.js';
export { TEST_POSTGRES_URL_ENV, type TestDatabase, type TestPostgres, startTestPostgres } from './database.js';
