/**
 * Where a rehearsal runs: natively (it starts the stack and every program itself) or against an
 * external stack (docker compose has started everything; the rehearsal only brings the crowd).
 * The run itself does not care which.
 */
import type { Logger } from '../lib/logger.js';
import type { SeatServiceConfig } from '../seat-service/service.js';
import type { SupervisedRestart } from '../stack/supervisor.js';
import type { DrillContext } from './drills.js';

export interface RehearsalEnvironment {
  mode: 'native' | 'external';
  /** The seat service the crowd calls (in this process). */
  seatConfig: SeatServiceConfig;
  /** The seat database as its owner: samples, checks, reconciliation. */
  seatAdminUrl: string;
  /** The consumer database as its owner: inboxes, read model, ledger. */
  consumerAdminUrl: string;
  alertmanagerUrl: string;
  /** The outbox connector's replication slot, for the retained WAL. */
  slotName: string;
  /** Message-IDs of the confirmation emails received so far. */
  emailMessageIds(): Promise<string[]>;
  /** What drills need; undefined where drills cannot run (external). */
  drillContext(downMs: number, logger: Logger): DrillContext | undefined;
  /** What the rehearsal's supervisor started again because it died on its own, not killed by a drill (native only). */
  unplannedRestarts(): readonly SupervisedRestart[];
  /** Log files of the programs the rehearsal started. */
  logFiles(): string[];
  /** Stops what the rehearsal started, unless keepRunning. */
  close(keepRunning: boolean): Promise<void>;
}
