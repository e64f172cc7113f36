import { startProgram } from '../lib/cli.js';
import { commandOf, readFlags, type ServiceFlags } from './cli-arguments.js';
import { createPool } from '../lib/postgres.js';
import type { Logger } from '../lib/logger.js';
import { createDatabaseIfMissing, migrateSeatDatabase, setupRoles } from './database-setup.js';
import { createShow } from './inventory.js';
import { purgeOutbox } from './retention.js';
import { openSeatService, type SeatServiceConfig } from './service.js';
import { parseSeatServiceConfig, seatServiceSettings } from './settings.js';

const REFUSED_EXIT_CODE = 3;

const USAGE = `Usage: npm run seat-service -- <command> [options]

  setup                         create the seat database if missing, migrate it, give the roles passwords
  create-show --show ID --sections A:20x30:4500[,B:...]   a show and its seats (section:rowsxseats:price in cents)
  hold --show ID --seats S1,S2 --buyer B                   hold seats, all or nothing
  confirm --hold ID --email E   turn a hold into an order
  release --hold ID             give a hold back
  expire [--limit N]            expire due holds (the sweeper does this on a schedule)
  purge-outbox                  delete outbox rows past the retention that the connector's slot has confirmed and
                                a clean reconciliation covered, in batches; deletes nothing while the slot is
                                missing, lost, unreserved or without a reader (prints why, exits 0)

Each command prints its result as one JSON line. Exit codes: 0 done, ${REFUSED_EXIT_CODE} refused (seat_taken,
unknown_seats, unknown_hold, hold_not_active, hold_expired: the JSON says which), 1 failed,
2 bad configuration or arguments.`;

/** A refusal of the seat service: the JSON's status is not one of the outcomes asked for. */
const DONE = new Set(['held', 'confirmed', 'released']);

async function main(config: SeatServiceConfig, args: string[], logger: Logger): Promise<number> {
  const command = commandOf(args);
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
  const flags = readFlags(command, args);
  const service = await openSeatService(config, logger);
  try {
    const result = await runServiceCommand(flags, service);
    console.log(JSON.stringify(result));
    if ('status' in result && !DONE.has(result.status)) {
      console.error(`seat-service: ${command} refused: ${result.status}`);
      return REFUSED_EXIT_CODE;
    }
    return 0;
  } finally {
    await service.close();
  }
}

async function runServiceCommand(
  flags: ServiceFlags,
  service: Awaited<ReturnType<typeof openSeatService>>,
): Promise<{ status: string } | { seatsCreated: number } | { expired: number }> {
  switch (flags.command) {
    case 'create-show':
      return {
        seatsCreated: await createShow(service.pool, {
          showId: flags.showId,
          title: flags.title,
          startsAt: new Date(Date.now() + 30 * 86_400_000),
          onSaleAt: new Date(),
          sections: flags.sections,
        }),
      };
    case 'hold':
      return service.hold(flags);
    case 'confirm':
      return service.confirm(flags);
    case 'release':
      return service.release(flags.holdId);
    case 'expire':
      return { expired: await service.expireDueHolds(flags.limit) };
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
