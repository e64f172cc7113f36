/**
 * `npm run redrive -- list <dlq topic>` lists dead letters grouped by reason.
 * `npm run redrive -- redrive <dlq topic> [--consumer C]… [--reason R]… [--ce-id ID]… [--partition P] [--from-offset A]
 *  [--to-offset B] [--rate N] [--by WHO] [--again] [--apply]` puts the chosen ones back on their
 * source topic; without --apply it only says what it would do.
 */
import { createKafka } from '../../lib/kafka.js';
import { kafkaClientSecurity } from '../../lib/kafka-security.js';
import { startProgram } from '../../lib/cli.js';
import { parseCommand } from './arguments.js';
import type { Logger } from '../../lib/logger.js';
import { createPool } from '../../lib/postgres.js';
import type { Config } from '../../lib/settings.js';
import { redriveSettings } from './settings.js';
import { listDeadLetters, redrive } from './redrive.js';
import { describeReasonGroups, groupByReason } from './select.js';

const USAGE = `usage: redrive list <dlq topic>
       redrive redrive <dlq topic> [--consumer C]... [--reason R]... [--ce-id ID]... [--partition P --from-offset A --to-offset B]
                               [--rate PER_SECOND] [--by WHO] [--again] [--apply]
Without --apply nothing is sent (dry run). Settings: redrive --help.\n`;

async function main(config: Config<typeof redriveSettings.settings>, args: string[], logger: Logger): Promise<number> {
  const command = parseCommand(args);
  if (command === undefined) {
    process.stderr.write(USAGE);
    return 2;
  }
  const kafka = createKafka({
    brokers: config.kafkaBrokers,
    clientId: 'redrive',
    logger,
    security: kafkaClientSecurity('redrive', config),
  });
  if (command.command === 'list') {
    const { byReason } = await listDeadLetters(kafka, command.topic);
    process.stdout.write(describeReasonGroups(command.topic, byReason));
    return 0;
  }
  if (config.databaseUrl === '') {
    process.stderr.write(
      'CONSUMER_DATABASE_URL is required by redrive (it records what was redriven); set it to the consumer database URL.\n',
    );
    return 2;
  }
  const pool = createPool({ connectionString: config.databaseUrl, applicationName: 'redrive', logger, max: 1 });
  try {
    const result = await redrive({
      kafka,
      pool,
      logger,
      deadLetterTopic: command.topic,
      selection: command.selection,
      apply: command.apply,
      ratePerSecond: command.rate,
      redrivenBy: command.by,
      again: command.again,
    });
    const verb = result.dryRun ? 'would redrive' : 'redrove';
    process.stdout.write(describeReasonGroups(`${command.topic} (selected)`, groupByReason(result.selected)));
    process.stdout.write(
      `${verb} ${result.redriven.length}; ${result.skipped.length} redriven before and left alone${command.again ? '' : ' (--again to include them)'}; run ${result.runId}\n`,
    );
    if (result.dryRun) process.stdout.write('dry run: nothing was sent; add --apply to do it.\n');
    return 0;
  } finally {
    await pool.end();
  }
}

startProgram({ settings: redriveSettings, usage: USAGE, main, logLevel: (config) => config.logLevel });
