import { flagValue, startProgram } from '../lib/cli.js';
import { createPool } from '../lib/postgres.js';
import type { Logger } from '../lib/logger.js';
import { createDatabaseIfMissing, migrateSeatDatabase, setupRoles } from './database-setup.js';
import { createShow } from './inventory.js';
import { parseSections } from './sections.js';
import { purgeOutbox } from './retention.js';
import { openSeatService, type SeatServiceConfig } from './service.js';
import { parseSeatServiceConfig, seatServiceSettings } from './settings.js';

const USAGE = `Usage: npm run seat-service -- <command> [options]

  setup                         create the seat database if missing, migrate it, give the roles passwords
  create-show --show ID --sections A:20x30:4500[,B:...]   a show and its seats (section:rowsxseats:price in cents)
  hold --show ID --seats S1,S2 --buyer B                   hold seats, all or nothing
  confirm --hold ID --email E   turn a hold into an order
  release --hold ID             give a hold back
  expire [--limit N]            expire due holds (the sweeper does this on a schedule)
  purge-outbox                  delete outbox rows past the retention that the connector's slot has confirmed and
                                a clean reconciliation covered, in batches; deletes nothing while the slot is
                                missing, lost, unreserved or without a reader (prints why, exits 0)`;

async function main(config: SeatServiceConfig, args: string[], logger: Logger): Promise<number> {
  const command = args[0];
  const need = (name: string): string => {
    const value = flagValue(args, name);
    if (value === undefined) throw new Error(`${command} needs --${name}; see --help`);
    return value;
  };
  if (command === 'setup') return setup(config, logger);
  if (command === 'purge-outbox') {
    const pool = createPool({
      connectionString: config.databaseUrl,
      applicationName: 'seat-service-purge',
      logger,
      max: 1,
    });
    try {
      // A skip is the interlock doing its job, not a failure: exit 0, and the log line says why.
      const outcome = await purgeOutbox(pool, {
        retentionMs: config.outboxRetentionMs,
        batchSize: config.purgeBatchSize,
        slotName: config.slotName,
        logger,
      });
      console.log(JSON.stringify(outcome));
      return 0;
    } finally {
      await pool.end();
    }
  }
  const service = await openSeatService(config, logger);
  try {
    const result = await runServiceCommand(command, need, args, service);
    console.log(JSON.stringify(result));
    return 0;
  } finally {
    await service.close();
  }
}

async function runServiceCommand(
  command: string | undefined,
  need: (name: string) => string,
  args: string[],
  service: Awaited<ReturnType<typeof openSeatService>>,
): Promise<unknown> {
  switch (command) {
    case 'create-show':
      return {
        seatsCreated: await createShow(service.pool, {
          showId: need('show'),
          title: flagValue(args, 'title') ?? need('show'),
          startsAt: new Date(Date.now() + 30 * 86_400_000),
          onSaleAt: new Date(),
          sections: parseSections(need('sections')),
        }),
      };
    case 'hold':
      return service.hold({ showId: need('show'), seatIds: need('seats').split(','), buyerId: need('buyer') });
    case 'confirm':
      return service.confirm({ holdId: need('hold'), buyerEmail: need('email') });
    case 'release':
      return service.release(need('hold'));
    case 'expire':
      return { expired: await service.expireDueHolds(Number(flagValue(args, 'limit') ?? 500)) };
    default:
      throw new Error(`unknown command "${command ?? ''}"; see --help`);
  }
}

async function setup(config: SeatServiceConfig, logger: Logger): Promise<number> {
  await createDatabaseIfMissing(config.adminDatabaseUrl, logger);
  const admin = createPool({
    connectionString: config.adminDatabaseUrl,
    applicationName: 'seat-service-setup',
    logger,
    max: 1,
  });
  try {
    const applied = await migrateSeatDatabase(admin, logger);
    await setupRoles(admin, { service: config.servicePassword, debezium: config.debeziumPassword });
    logger.info({ applied }, 'seat database ready');
    return 0;
  } finally {
    await admin.end();
  }
}

startProgram({ settings: seatServiceSettings, usage: USAGE, main, parse: parseSeatServiceConfig });
