/**
 * A consumer process that dies (SIGKILL) inside its handler, for the crash-redelivery test: it
 * runs the kit over the events in CRASH_EVENTS (JSON) against CRASH_DATABASE_URL. Whatever the
 * runtime wrote before the handler ran stays; the handler's transaction dies with the process.
 */
import { ConsumerTestKit, type TestEvent } from '../../../../consumers/runtime/testing/index.js';
import { createLogger } from '../../../../lib/logger.js';
import { createPool } from '../../../../lib/postgres.js';
import { noFaults, seatEffectsConsumer } from './seat-effects.js';

const faults = noFaults();
faults.during = () => process.kill(process.pid, 'SIGKILL');
const pool = createPool({
  connectionString: process.env.CRASH_DATABASE_URL ?? '',
  applicationName: 'crash-child',
  logger: createLogger({ name: 'crash-child', level: 'silent' }),
});
const kit = new ConsumerTestKit(seatEffectsConsumer(faults), { pool });
await kit.run(JSON.parse(process.env.CRASH_EVENTS ?? '[]') as TestEvent[]);
throw new Error('the handler was never called: nothing crashed');
