/** The bench's scenarios. */
import type { Scenario } from './context.js';
import { backlogDrainScenario } from './backlog-drain.js';
import { connectCrashScenario } from './connect-crash.js';
import { connectFailoverScenario } from './connect-failover.js';
import { emailScenario } from './email.js';
import { flatLagScenario } from './flat-lag.js';
import { openLoopScenario } from './open-loop.js';
import { pollingRelayScenario } from './polling-relay.js';
import { recoveryScenario } from './recovery.js';
import { scaleOutScenario } from './scale-out.js';
import { stadiumRehearsalScenario } from './stadium-rehearsal.js';

/** Every scenario of `npm run bench`, in the order it runs them. */
export const SCENARIOS: readonly Scenario[] = [
  backlogDrainScenario,
  openLoopScenario,
  emailScenario,
  pollingRelayScenario,
  flatLagScenario,
  connectCrashScenario,
  connectFailoverScenario,
  scaleOutScenario,
  recoveryScenario,
  stadiumRehearsalScenario,
];
