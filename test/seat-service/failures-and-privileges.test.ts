import { describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { ConnectorFailed, deleteConnector, restartFailed, waitUntilRunning } from '../../connectors/connect-client.js';
import { applyOutboxConnector } from '../../connectors/outbox-connector.js';
import { EVENTS, readEventSchema } from '../../events/catalogue.js';
import { PipelineError } from '../../lib/errors.js';
import { createSchemaRegistry } from '../../lib/schema-registry.js';
import { waitFor } from '../../lib/wait.js';
import { withTransaction } from '../../lib/postgres.js';
import { createEventWriter } from '../../seat-service/event-writer.js';
import { seatId } from '../../seat-service/inventory.js';
import { purgeOutbox } from '../../seat-service/retention.js';
import { openSeatService } from '../../seat-service/service.js';
import { installLeakGuard } from '../support/leak-guard.js';
import { collectRecords, dropSlot, testLogger, useSeatPipeline } from '../support/seat-pipeline.js';
import { adminQuery, requireStack, uniqueName } from '../support/stack.js';

const stack = requireStack();
installLeakGuard();

describe('what must not happen: lost, phantom or leaked events, and too much privilege', () => {
  const show = 'fail';
  const pipeline = useSeatPipeline(show, { section: 'G', rows: 1, seatsPerRow: 10, priceCents: 5000 });

  /** Holds seats of row 1 (each test uses seats of its own) and returns the outbox ids it wrote. */
  async function holdSeats(seats: number[], buyerId: string): Promise<string[]> {
    const held = await pipeline().service.hold({
      showId: show,
      seatIds: seats.map((n) => seatId(show, 'G', 1, n)),
      buyerId,
    });
    if (held.status !== 'held') throw new Error(`${buyerId}: ${held.status}`);
    return held.eventIds;
  }

  it('a rolled-back transaction produces no event', async () => {
    const collector = await collectRecords([pipeline().topics.seat]);
    try {
      let phantomIds: string[] = [];
      await expect(
        withTransaction(pipeline().service.pool, async (client) => {
          phantomIds = await pipeline().service.events.write(
            client,
            [
              {
                name: 'seatReleased',
                payload: {
                  seat_id: seatId(show, 'G', 1, 1),
                  show_id: show,
                  section: 'G',
                  row: '1',
                  seat_number: 1,
                  hold_id: randomUUID(),
                  released_at: Date.now(),
                },
              },
            ],
            new Date(),
          );
          throw new Error('business rule failed after the event was written');
        }),
      ).rejects.toThrow('business rule failed');
      const [marker] = await holdSeats([2], 'marker');
      await waitFor(() => collector.records.some((r) => r.headers.ce_id === marker), {
        timeoutMs: 30_000,
        description: 'the marker event',
      });
      expect(phantomIds).toHaveLength(1);
      expect(collector.records.filter((r) => phantomIds.includes(r.headers.ce_id ?? ''))).toEqual([]);
      expect(
        (
          await adminQuery(pipeline().adminUrl, 'select count(*)::int as n from outbox where id = any($1::uuid[])', [
            phantomIds,
          ])
        ).rows[0].n,
      ).toBe(0);
    } finally {
      await collector.stop();
    }
  });

  it('the seat service role cannot touch slots or publications; the Debezium role reads the outbox only', async () => {
    const asService = pipeline().databaseUrl;
    await expect(
      adminQuery(asService, "select pg_create_logical_replication_slot('sneaky', 'pgoutput')"),
    ).rejects.toThrow(/permission denied|must be superuser or replication/);
    await expect(adminQuery(asService, 'create publication sneaky for table seats')).rejects.toThrow(
      /must be owner|permission denied/,
    );
    const asDebezium = pipeline().adminUrl.replace('postgres:postgres@', 'stagefront_debezium:stagefront_debezium@');
    const written = await holdSeats([6], 'privileges');
    const seen = await adminQuery(asDebezium, 'select id from outbox where id = any($1::uuid[])', [written]);
    expect(seen.rows.map((r) => r.id as string)).toEqual(written);
    await expect(adminQuery(asDebezium, 'select count(*) from seats')).rejects.toThrow(/permission denied/);
    await expect(adminQuery(asDebezium, 'delete from outbox')).rejects.toThrow(/permission denied/);
  });

  it('outbox retention purges old rows in batches and the deletes never reach Kafka', async () => {
    const collector = await collectRecords([pipeline().topics.seat, pipeline().topics.order]);
    try {
      // Rows of this test, aged past the retention; rows other tests write stay young and are kept.
      const aged = await holdSeats([4, 5], 'before-purge');
      await waitFor(() => aged.every((id) => collector.records.some((r) => r.headers.ce_id === id)), {
        timeoutMs: 30_000,
        description: 'the rows to be purged on Kafka',
      });
      await adminQuery(
        pipeline().adminUrl,
        "update outbox set created_at = now() - interval '30 days' where id = any($1::uuid[])",
        [aged],
      );
      // The purge's interlock: a clean reconciliation covering them, and the slot past a purge checkpoint after them.
      await adminQuery(
        pipeline().adminUrl,
        `insert into outbox_reconciled (covered_from, covered_to, snapshot_xmin, consumers)
        select now() - interval '31 days', now() - interval '29 days', pg_snapshot_xmin(pg_current_snapshot())::text::bigint, '{test}'`,
      );
      let purged = 0;
      await waitFor(
        async () => {
          const outcome = await purgeOutbox(pipeline().service.pool, {
            retentionMs: 14 * 86_400_000,
            batchSize: 1,
            slotName: pipeline().connector.slotName,
            logger: testLogger,
          });
          purged += outcome.purged;
          return purged >= aged.length;
        },
        {
          timeoutMs: 30_000,
          intervalMs: 500,
          description: 'the connector to confirm a purge checkpoint after the aged rows',
        },
      );
      expect(purged).toBe(aged.length);
      expect(
        (
          await adminQuery(pipeline().adminUrl, 'select count(*)::int as n from outbox where id = any($1::uuid[])', [
            aged,
          ])
        ).rows[0].n,
      ).toBe(0);
      await holdSeats([3], 'after-purge');
      // Every row ever written, purged ones included, once each, and nothing else: no tombstones or deletes.
      const written = [
        ...aged,
        ...(await adminQuery(pipeline().adminUrl, 'select id from outbox')).rows.map((r) => r.id as string),
      ].sort();
      await waitFor(() => written.every((id) => collector.records.some((r) => r.headers.ce_id === id)), {
        timeoutMs: 30_000,
        description: 'every row written, the marker after the purge included',
      });
      expect(collector.records.filter((r) => r.value.length === 0)).toEqual([]);
      expect(collector.records.map((r) => r.headers.ce_id).sort()).toEqual(written);
    } finally {
      await collector.stop();
    }
  });

  it('an incompatible schema change is refused at start, naming the subject and the field, before any event is written', async () => {
    const prefix = `${uniqueName('compat')}.`;
    const registry = createSchemaRegistry(stack.registryUrl);
    await createEventWriter(registry, { subjectPrefix: prefix });
    const breaking = JSON.parse(readEventSchema('seatHeld')) as { fields: unknown[] };
    breaking.fields.push({ name: 'price_cents', type: 'int' });
    const outboxBefore = (await adminQuery(pipeline().adminUrl, 'select count(*)::int as n from outbox')).rows[0].n;
    const start = openSeatService({ ...pipeline().serviceConfig, subjectPrefix: prefix }, testLogger, {
      readSchema: (name) => (name === 'seatHeld' ? JSON.stringify(breaking) : readEventSchema(name)),
    });
    await expect(start).rejects.toThrow(PipelineError);
    await expect(start).rejects.toThrow(`${prefix}${EVENTS.seatHeld.subject}`);
    await expect(start).rejects.toThrow(/field "price_cents" was added without a default/);
    expect((await adminQuery(pipeline().adminUrl, 'select count(*)::int as n from outbox')).rows[0].n).toBe(
      outboxBefore,
    );
  });

  it('a configuration Connect refuses, and a task that cannot start, fail the connector command with the reason', async () => {
    const name = uniqueName('broken').toLowerCase();
    try {
      const refused = applyOutboxConnector(
        {
          ...pipeline().connector,
          connectorName: name,
          slotName: name,
          debeziumPasswordReference: '${env:NO_SUCH_VARIABLE}',
        },
        testLogger,
      );
      await expect(refused).rejects.toThrow(/connector_config_refused|Connect refused the configuration/);
      await expect(refused).rejects.toThrow(/password authentication failed/);
      const failing = applyOutboxConnector(
        { ...pipeline().connector, connectorName: name, slotName: name, publicationName: 'no_such_publication' },
        testLogger,
      );
      await expect(failing).rejects.toThrow(ConnectorFailed);
      await expect(failing).rejects.toThrow(/Publication autocreation is disabled/);
      // Fix the cause, then restart the failed task: the connector command's `restart`.
      await adminQuery(
        pipeline().adminUrl,
        "create publication no_such_publication for table outbox with (publish = 'insert')",
      );
      await restartFailed(stack.connect, name);
      const running = await waitUntilRunning(stack.connect, name, 60_000);
      expect(running.tasks.map((t) => t.state)).toEqual(['RUNNING']);
    } finally {
      await deleteConnector(stack.connect, name);
      await dropSlot(stack.postgresAdminUrl, name);
    }
  });
});
