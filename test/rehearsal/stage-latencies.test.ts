import { describe, expect, it } from 'vitest';
import { eventTimes, stageLatencies } from '../../rehearsal/stages.js';
import { consumerDatabase } from '../consumers/helpers/stack-fixture.js';
import { installLeakGuard } from '../support/leak-guard.js';
import { requireStack } from '../support/stack.js';

requireStack();
installLeakGuard();

describe('the rehearsal splits commit → effect into stages', () => {
  it('measures Debezium to Kafka, Kafka to the consumer and the SMTP send from the outbox and inbox times', async () => {
    // One database stands in for both: an outbox row, and inbox rows written at known times after it.
    const db = await consumerDatabase('stages');
    try {
      await db.pool.query(`create table outbox (id uuid primary key, created_at timestamptz not null)`);
      const t0 = Date.UTC(2026, 11, 1, 10, 0, 0);
      const at = (ms: number) => new Date(t0 + ms).toISOString();
      await db.pool.query(
        `insert into outbox values ('00000000-0000-7000-8000-000000000001', $1), ('00000000-0000-7000-8000-000000000002', $1)`,
        [at(0)],
      );
      const insert = `insert into inbox (consumer, event_id, event_type, source_topic, source_partition, source_offset, appended_at, received_at, completed_at, status)
                      values ($1, $2, 't', 'topic', 0, 0, $3, $4, $5, $6)`;
      await db.pool.query(insert, [
        'seat-availability',
        '00000000-0000-7000-8000-000000000001',
        at(20),
        at(50),
        null,
        'applied',
      ]);
      await db.pool.query(insert, [
        'confirmation-email',
        '00000000-0000-7000-8000-000000000002',
        at(30),
        at(90),
        at(290),
        'sent',
      ]);
      // A row written before the stage column existed has no appended_at: it counts end to end only.
      await db.pool.query(insert, [
        'seat-availability',
        '00000000-0000-7000-8000-000000000002',
        null,
        at(70),
        null,
        'applied',
      ]);

      const stages = stageLatencies(await eventTimes(db.pool, db.pool, new Date(t0 - 1000)));
      const of = (consumer: string, stage: string) =>
        stages.find((s) => s.consumer === consumer && s.stage.startsWith(stage));
      expect(of('seat-availability', 'commit → Kafka')).toMatchObject({ p50: 20, count: 1 });
      expect(of('seat-availability', 'Kafka → consumer')).toMatchObject({ p50: 30, count: 1 });
      expect(of('seat-availability', 'consumer → email')).toBeUndefined();
      expect(of('seat-availability', 'commit → effect')).toMatchObject({ p50: 50, max: 70, count: 2 });
      expect(of('confirmation-email', 'Kafka → consumer')).toMatchObject({ p50: 60 });
      expect(of('confirmation-email', 'consumer → email')).toMatchObject({ p50: 200 });
      expect(of('confirmation-email', 'commit → effect')).toMatchObject({ p50: 290 });
    } finally {
      await db.close();
    }
  });
});
