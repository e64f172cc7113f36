/**
 * `npm run slot-recovery -- --since <ISO time | auto> [--apply]`: recovers the outbox connector
 * from a lost replication slot. A dry run (the default) prints the plan; --apply does it.
 */
import { flagValue, startProgram } from '../../lib/cli.js';
import { PipelineError } from '../../lib/errors.js';
import type { Logger } from '../../lib/logger.js';
import { describeReconciliation } from '../reconciliation/report.js';
import { parseTime, readArguments } from '../reconciliation/time-flags.js';
import { addressOfUrl, parseAddress, type DatabaseAddress } from './new-primary.js';
import { recoverLostSlot } from './recovery.js';
import type { SlotRecoveryConfig } from './recovery-context.js';
import { slotRecoverySettings } from './settings.js';

const GAPS_EXIT_CODE = 3;

const USAGE = `Usage: npm run slot-recovery -- --since <ISO time | auto> [--apply]
       npm run slot-recovery -- --after-failover [--connector-db <host:port>] --since <ISO time | auto> [--apply]

Recovers the outbox connector (CONNECTOR_NAME) from a lost replication slot:
  1. stop the connector            2. drop the lost slot         3. reset its offsets
  4. resume it on a fresh slot     5. re-emit the outbox rows created since the start time
  (an incremental snapshot through Debezium's signal table)     6. wait until every inbox has them
Steps 1-4 run only when the slot is lost or missing. Running it again is safe.

  --since <time>  start of the re-emit, ISO 8601 with an offset (2026-11-29T09:55:00Z)
  --since auto    the oldest outbox row some consumer's inbox lacks, minus SLOT_RECOVERY_SAFETY_MARGIN_MS
  --apply         do it (without it: print the plan, change nothing)

After a failover on Postgres 15/16 (no synchronized slot; docs/failover.md), with
SLOT_RECOVERY_SEAT_DB_URL pointing at the promoted standby:
  --after-failover            1. create the slot there (writes may resume after it)  2. stop the connector
                              3. point it at the new primary  4. reset its offsets, resume it
                              5. re-emit the window  6. wait until every inbox has it
  --connector-db <host:port>  the new primary as Kafka Connect reaches it (default: the host and port
                              of SLOT_RECOVERY_SEAT_DB_URL)

Exit codes: 0 done (or planned), ${GAPS_EXIT_CODE} gaps remain after the re-emit, 1 failed, 2 bad configuration or arguments.`;

function sinceArgument(args: string[]): Date | 'auto' {
  const value = flagValue(args, 'since');
  if (value === undefined)
    throw new PipelineError('bad_argument', '--since is required: an ISO time (2026-11-29T09:55:00Z) or auto');
  return value === 'auto' ? 'auto' : parseTime(value, 'since');
}

function failoverArgument(config: SlotRecoveryConfig, args: string[]): DatabaseAddress | undefined {
  const given = flagValue(args, 'connector-db');
  if (!args.includes('--after-failover')) {
    if (given !== undefined) throw new PipelineError('bad_argument', '--connector-db goes with --after-failover');
    return undefined;
  }
  return given === undefined ? addressOfUrl(config.seatDbUrl) : parseAddress(given, '--connector-db');
}

async function main(config: SlotRecoveryConfig, args: string[], logger: Logger): Promise<number> {
  const parsed = readArguments('slot-recovery', () => ({
    since: sinceArgument(args),
    afterFailover: failoverArgument(config, args),
  }));
  if (parsed === undefined) return 2;
  const outcome = await recoverLostSlot(config, { ...parsed, apply: args.includes('--apply') }, logger);
  if (!args.includes('--apply')) {
    process.stdout.write(outcome.plan);
    return 0;
  }
  if (outcome.verification !== undefined) process.stdout.write(describeReconciliation(outcome.verification));
  return outcome.verification?.gaps === true ? GAPS_EXIT_CODE : 0;
}

startProgram({ settings: slotRecoverySettings, usage: USAGE, main });
