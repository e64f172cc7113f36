/**
 * The on-sale rehearsal: the whole pipeline on this machine, a crowd at "10:00" (with fault drills
 * if asked), a live view while it runs, and a report that says whether every seat was sold at most
 * once and every consumer saw every event exactly once: text, JSON record and HTML charts.
 */
import { startProgram as startCli, flagValue } from '../lib/cli.js';
import { PipelineError } from '../lib/errors.js';
import type { Logger } from '../lib/logger.js';
import { stackLayout } from '../stack/config.js';
import { DRILL_TARGETS, parseDrills, type DrillTarget } from './drill-targets.js';
import { NO_STANDBY_MESSAGE } from './drills.js';
import { openExternalEnvironment } from './external.js';
import { openNativeEnvironment } from './native.js';
import { rehearseIn } from './rehearse.js';
import { parseRehearsalConfig, rehearsalSettings, type RehearsalConfig } from './settings.js';

const USAGE = `Usage: npm run rehearsal [-- --show NAME] [--drill ${DRILL_TARGETS.join(',')}|all]

Starts the native stack, prepares the seat and consumer databases, applies the outbox connector,
starts the three consumers, the hold sweeper, the slot monitor, the job watchdog and a local SMTP
sink, then lets a crowd of buyers press the button at once, shows what happens while it runs, and
reports what happened: rehearsal-<show>.txt, .json and .html in REHEARSAL_REPORT_DIR.

--drill kills each named part with -9 during the crowd and starts it again (in that order, one
after the other); the crowd then arrives over (drills + 1) × REHEARSAL_DRILL_SPACING_MS.
failover (a stack with STACK_POSTGRES_STANDBY=yes) kills the seat database's primary and promotes
its standby: one-way, so never part of all, and only as the last drill.
REHEARSAL_STACK=external runs the crowd against a stack someone else started (docker compose).`;

function drillsFrom(args: string[], config: RehearsalConfig): DrillTarget[] {
  if (!args.includes('--drill')) return config.drills;
  const value = flagValue(args, 'drill');
  if (value === undefined || value.startsWith('--'))
    throw new PipelineError(
      'bad_argument',
      `--drill needs a list, e.g. --drill connect,consumer (targets: ${DRILL_TARGETS.join(', ')}, or all)`,
    );
  try {
    return parseDrills(value);
  } catch (err) {
    throw new PipelineError('bad_argument', `--drill ${value}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

async function rehearse(config: RehearsalConfig, args: string[], logger: Logger): Promise<number> {
  let drills: DrillTarget[];
  try {
    drills = drillsFrom(args, config);
    if (drills.length > 0 && config.stack !== 'native') {
      throw new PipelineError(
        'bad_argument',
        `--drill needs REHEARSAL_STACK=native: drills kill the native stack's processes, which an external stack does not have`,
      );
    }
    if (drills.includes('failover') && !stackLayout().settings.postgresStandby)
      throw new PipelineError('bad_argument', `--drill failover: ${NO_STANDBY_MESSAGE}`);
  } catch (err) {
    if (!(err instanceof PipelineError)) throw err;
    console.error(`rehearsal: ${err.message}`);
    return 2;
  }
  const env = config.stack === 'native' ? await openNativeEnvironment(config, logger) : openExternalEnvironment(config);
  return rehearseIn(env, config, { drills, showId: flagValue(args, 'show') }, logger);
}

startCli({ settings: rehearsalSettings, usage: USAGE, main: rehearse, parse: parseRehearsalConfig });
