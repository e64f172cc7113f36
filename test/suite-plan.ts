/**
 * Which Node runs which tests in `npm run -s test:all`. Users run Node 22 or 24 LTS; the machine
 * that runs CI has Node 20. The suite runs on the Node it was started with and on Node 24 (see
 * stack/node-runtime.ts), one after the other against the same stack, never both at once: tests
 * start, stop and kill stack processes.
 */
import { NODE_24, type NodePin } from '../stack/node-runtime.js';

/**
 * Test files (vitest globs from the project root) that hold faults for tens of seconds or kill and
 * restart processes: outages, kill -9, a lost slot, a whole second stack started and stopped. They
 * take about two thirds of the suite's time. The started-with Node leaves them out when Node 24
 * runs everything after it: they test how the pipeline (Postgres, Kafka, Connect, the consumers'
 * retry rules) behaves under faults, which the Node version does not change, and running them
 * twice would take CI past its time budget. The Node 20 API surface is checked anyway: the
 * type-check uses @types/node for 20, and every other test runs on both.
 */
export const LONG_FAULT_DRILLS: readonly string[] = [
  'test/**/*drill*.test.ts', // infrastructure, email, rebalance and rehearsal drills
  'test/consumers/database-outage.test.ts',
  'test/consumers/backlog-deadline.test.ts',
  'test/consumers/crash-loop.test.ts',
  'test/seat-service/connect-crash.test.ts',
  'test/slot-recovery/lost-slot-recovery.test.ts',
  'test/failover/**/*.test.ts', // a primary killed with -9 and its standby promoted, on Postgres 17 and 15
  'test/connectors/connector-status.test.ts',
  'test/stack/lifecycle.test.ts',
  'test/consumers/hostile-records.test.ts', // a consumer process restarted as its supervisor would
  'test/consumers/registry-outage-hold.test.ts', // partitions held by a registry that lost its schemas
  'test/slot-monitor/keep-size-raise.test.ts', // a slot in trouble saved by an operator's raise of the cap
  'test/seat-service/purge-lost-slot.test.ts', // a cluster of its own whose slot is lost
];

/**
 * Slow test files whose subject the Node version does not change: a Java program, Postgres 17
 * replication and the endpoint in front of it, and the consumer a team writes from the guide or the
 * generator (run against the Node users run, 24; the type-check covers Node 20's API). Like the
 * long drills, they run once, on Node 24, to keep CI within its time budget.
 */
export const NODE_INDEPENDENT_SLOW: readonly string[] = [
  'test/interop/**/*.test.ts',
  'test/slot-monitor/standby-slots.test.ts',
  'test/stack/postgres-endpoint.test.ts',
  'test/consumers/new-consumer.test.ts',
  'test/consumers/guide-example.test.ts',
  'test/seat-service/purge-interlock.test.ts', // reconcile as a child process per case
  'test/consumers/kafka-security-start.test.ts', // a program process per case, refused by its settings parsing
  'test/stack/kafka-security.test.ts', // a secured Kafka node and a Connect worker of its own (TLS, SCRAM and ACLs are the JVMs')
];

/** What the started-with Node leaves to Node 24 when both run. */
export const RUN_ONCE_ON_NODE_24: readonly string[] = [...LONG_FAULT_DRILLS, ...NODE_INDEPENDENT_SLOW];

/** Set for every vitest run of test:all: the Node version that run is on (test/unit/suite-node.test.ts checks it). */
export const SUITE_NODE_ENV = 'STAGEFRONT_SUITE_NODE';

/** `--node` of test:all: both (default), only the Node it was started with, or only Node 24. */
export type NodeChoice = 'both' | 'current' | '24';

export interface SuiteRun {
  /** undefined: the Node running test:all (process.execPath); a pin: that Node, installed on demand. */
  pin: NodePin | undefined;
  /** Test files left out of this run (vitest --exclude). */
  exclude: readonly string[];
}

export const NODE_CHOICES: readonly NodeChoice[] = ['both', 'current', '24'];

function majorOf(version: string): number {
  return Number(/^v?(\d+)\./.exec(version)?.[1]);
}

/**
 * The runs for a choice. Started on Node 24 already, `both` is one full run: a second would test
 * the same major twice. Otherwise the started-with Node runs everything but the long drills and the
 * Node-independent slow tests, then
 * Node 24 runs everything.
 */
export function suiteRuns(choice: NodeChoice, currentVersion: string = process.version): SuiteRun[] {
  const full = (pin: NodePin | undefined): SuiteRun => ({ pin, exclude: [] });
  if (choice === 'current') return [full(undefined)];
  if (choice === '24') return [full(NODE_24)];
  if (majorOf(currentVersion) === majorOf(NODE_24.version)) return [full(undefined)];
  return [{ pin: undefined, exclude: RUN_ONCE_ON_NODE_24 }, full(NODE_24)];
}

/** Splits test:all's arguments into `--node <choice>` and the rest, which go to vitest. */
export function parseSuiteArgs(args: readonly string[]): { node: NodeChoice; vitestArgs: string[] } {
  let node: NodeChoice = 'both';
  const vitestArgs: string[] = [];
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i] ?? '';
    const inline = /^--node=(.*)$/.exec(arg);
    if (arg !== '--node' && !inline) {
      vitestArgs.push(arg);
      continue;
    }
    const value = inline ? inline[1] : args[(i += 1)];
    if (!NODE_CHOICES.includes(value as NodeChoice)) {
      throw new Error(`--node ${value ?? '(no value)'} is not one of ${NODE_CHOICES.join(', ')}: both runs the started-with Node and Node 24, current only the started-with one, 24 only Node 24`);
    }
    node = value as NodeChoice;
  }
  return { node, vitestArgs };
}
