import type { Logger } from '../lib/logger.js';
import { createPool, type Pool } from '../lib/postgres.js';
import { createSchemaRegistry } from '../lib/schema-registry.js';
import type { Config } from '../lib/settings.js';
import { startTracing, traced } from '../lib/tracing.js';
import { createEventWriter, type EventWriter, type EventWriterOptions } from './event-writer.js';
import { confirmHold, releaseHold, type HoldEndResult } from './hold-endings.js';
import { holdSeats, type HoldResult } from './holds.js';
import { expireDueHolds } from './expiry.js';
import type { seatServiceSettings } from './settings.js';

export type SeatServiceConfig = Config<typeof seatServiceSettings.settings>;

export interface SeatService {
  pool: Pool;
  events: EventWriter;
  hold(request: { showId: string; seatIds: string[]; buyerId: string }): Promise<HoldResult>;
  confirm(request: { holdId: string; buyerEmail: string }): Promise<HoldEndResult>;
  release(holdId: string): Promise<HoldEndResult>;
  expireDueHolds(limit?: number): Promise<number>;
  close(): Promise<void>;
}

/**
 * Opens the seat service: a pool on the seat database and the event schemas registered (an
 * incompatible schema stops it here, before any event is written).
 */
export async function openSeatService(
  config: SeatServiceConfig,
  logger: Logger,
  writerOptions: Omit<EventWriterOptions, 'subjectPrefix' | 'dataSchemaBaseUrl'> = {},
): Promise<SeatService> {
  const registry = createSchemaRegistry(config.registryUrl);
  const events = await createEventWriter(registry, {
    subjectPrefix: config.subjectPrefix,
    dataSchemaBaseUrl: config.registryPublicUrl || config.registryUrl,
    ...writerOptions,
  });
  const pool = createPool({
    connectionString: config.databaseUrl,
    applicationName: 'seat-service',
    logger,
    max: config.poolSize,
  });
  // Only with an endpoint: otherwise whatever tracing this process set up (a test's) stays.
  const tracing =
    config.otlpEndpoint === ''
      ? undefined
      : startTracing({ serviceName: 'seat-service', otlpEndpoint: config.otlpEndpoint, logger });
  return {
    pool,
    events,
    hold: (request) =>
      traced(
        'seat-service hold',
        { 'stagefront.show_id': request.showId, 'stagefront.seat_count': request.seatIds.length },
        (span) =>
          holdSeats(pool, writingWith(events, span.traceparent), { ...request, ttlMs: config.holdTtlMs }, logger),
      ),
    confirm: (request) =>
      traced('seat-service confirm', { 'stagefront.hold_id': request.holdId }, (span) =>
        confirmHold(pool, writingWith(events, span.traceparent), request, logger),
      ),
    release: (holdId) =>
      traced('seat-service release', { 'stagefront.hold_id': holdId }, (span) =>
        releaseHold(pool, writingWith(events, span.traceparent), holdId, logger),
      ),
    expireDueHolds: (limit = 500) =>
      traced('seat-service expire', {}, (span) =>
        expireDueHolds(pool, writingWith(events, span.traceparent), { limit, logger }),
      ),
    close: async () => {
      await pool.end();
      await tracing?.shutdown();
    },
  };
}

/** The writer with the operation's span as every row's traceparent (a retried transaction writes it again). */
function writingWith(events: EventWriter, traceparent: string): EventWriter {
  return { write: (client, pending, at) => events.write(client, pending, at, traceparent) };
}
