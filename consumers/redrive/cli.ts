/**
 * `npm run redrive -- list <dlq topic>` lists dead letters grouped by reason.
 * `npm run redrive -- redrive <dlq topic> [--reason R]… [--ce-id ID]… [--partition P] [--from-offset A]
 *  [--to-offset B] [--rate N] [--by WHO] [--again] [--apply]` puts the chosen ones back on their
 * source topic; without --apply it only says what it would do.
 */
import { parseArgs } from 'node:util';
import { createKafka } from '../../lib/kafka.js';
import { kafkaClientSecurity } from '../../lib/kafka-security.js';
import { startProgram } from '../../lib/cli.js';
import type { Logger } from '../../lib/logger.js';
import { createPool } from '../../lib/postgres.js';
import type { Config } from '../../lib/settings.js';
import { redriveSettings } from './settings.js';
import { listDeadLetters, redrive } from './redrive.js';
import { describeReasonGroups, groupByReason } from './select.js';

const USAGE = `usage: redrive list <dlq topic>
       redrive redrive <dlq topic> [--reason R]... [--ce-id ID]... [--partition P --from-offset A --to-offset B]
                               [--rate PER_SECOND] [--by WHO] [--again] [--apply]
Without --apply nothing is sent (dry run). Settings: redrive --help.\n`;

function parseCommand(args: string[]) {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      reason: { type: 'string', multiple: true },
      'ce-id': { type: 'string', multiple: true },
      partition: { type: 'string' },
      'from-offset': { type: 'string' },
      'to-offset': { type: 'string' },
      rate: { type: 'string', default: '50' },
      by: { type: 'string', default: process.env.USER ?? 'unknown' },
      again: { type: 'boolean', default: false },
      apply: { type: 'boolean', default: false },
    },
  });
  const [command, topic] = positionals;
  if ((command !== 'list' && command !== 'redrive') || topic === undefined) return undefined;
  const rate = Number(values.rate);
  if (!Number.isFinite(rate) || rate <= 0)
    throw new Error(`--rate ${values.rate} is not a positive number of records per second; e.g. --rate 50`);
  const selection = {
    reasons: values.reason ?? [],
    ceIds: values['ce-id'] ?? [],
    ...(values.partition === undefined ? {} : { partition: Number(values.partition) }),
    ...(values['from-offset'] === undefined ? {} : { fromOffset: BigInt(values['from-offset']) }),
    ...(values['to-offset'] === undefined ? {} : { toOffset: BigInt(values['to-offset']) }),
  };
  return { command, topic, selection, rate, by: values.by, again: values.again, apply: values.apply };
}

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
