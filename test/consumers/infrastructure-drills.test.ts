/**
 * Fault drills: the consumer database misbehaves under load without going away (for a database
 * that goes away, see database-outage.test.ts), each for long enough that some partition fails
 * more tries than the delivery limit (runFaultDrill counts them): 10 s when a try fails at once,
 * 30 s when each waits out the query timeout. Each drill ends with every event applied exactly
 * once in key order, nothing dead-lettered (the event type's policy is dead-letter, with a
 * deadline well past the fault), and the failure alert's series raised during the fault with the
 * failure's SQLSTATE and gone after.
 */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { DeliveryPolicy } from '../../consumers/runtime/types.js';
import { installLeakGuard } from '../support/leak-guard.js';
import { startSilentProxy } from '../support/silent-proxy.js';
import { adminQuery, requireStack } from '../support/stack.js';
import { runFaultDrill, startDrill } from './helpers/drill.js';

const stack = requireStack();
installLeakGuard();

/** A fault each try meets at once: several tries of each partition at the 2 s backoff cap. */
const HOLD_MS = 10_000;
/** A database that never answers: each try of its one partition waits out the 2 s query timeout. */
const SILENT_HOLD_MS = 30_000;
const POLICY: DeliveryPolicy = {
  deadlineMs: 300_000,
  lateRetryWindowMs: 5_000,
  deliveryLimit: 3,
  retryBaseMs: 100,
  retryCapMs: 2_000,
};
const drillOptions = (prefix: string) => ({
  stack,
  prefix,
  policy: POLICY,
  counted: { whenLate: 'dead-letter' as const },
});

describe('the consumer database misbehaves without going away', () => {
  it('every connection stops answering for 30 s and those open then never answer again (half-open, as after a failover): each try fails at the query timeout, held and retried, nothing dead-lettered', async () => {
    const proxy = await startSilentProxy(Number(new URL(stack.postgresAdminUrl).port));
    const drill = await startDrill({
      ...drillOptions('drill_silent'),
      // One partition: each try waits out the query timeout, and every try lands on it.
      partitions: 1,
      pool: { through: (url) => proxy.through(url), queryTimeoutMs: 2_000 },
    });
    await runFaultDrill(drill, {
      expectedCode: /^postgres_unanswered$/,
      holdMs: SILENT_HOLD_MS,
      start: () => Promise.resolve(proxy.silence()),
      repair: () => Promise.resolve(proxy.speak()),
    });
    // The fault reached connections the consumer held: the ones it silenced never answer again.
    expect(proxy.counts().silenced).toBeGreaterThan(0);
    await drill.close();
    await proxy.close();
  });

  it('read-only for 10 s (default_transaction_read_only, as on a standby): held and retried, nothing dead-lettered', async () => {
    const drill = await startDrill(drillOptions('drill_readonly'));
    const database = `"${drill.db.name}"`;
    await runFaultDrill(drill, {
      expectedCode: /^25006$/,
      holdMs: HOLD_MS,
      start: async () => {
        await adminQuery(stack.postgresAdminUrl, `alter database ${database} set default_transaction_read_only = on`);
        await drill.db.dropSessions();
      },
      repair: async () => {
        // From another database: this one's sessions are read-only now.
        await adminQuery(stack.postgresAdminUrl, `alter database ${database} reset default_transaction_read_only`);
        await drill.db.dropSessions();
      },
    });
    await drill.close();
  });

  it("a grant revoked from the consumer's role for 10 s: held and retried, nothing dead-lettered", async () => {
    const drill = await startDrill(drillOptions('drill_grant'));
    const role = `"${drill.db.role}"`;
    await runFaultDrill(drill, {
      expectedCode: /^42501$/,
      holdMs: HOLD_MS,
      start: async () => {
        await drill.db.admin(`revoke insert on applied_events from ${role}`);
      },
      repair: async () => {
        await drill.db.admin(`grant insert on applied_events to ${role}`);
      },
    });
    await drill.close();
  });

  it('every batch cancelled by statement_timeout for 10 s: held and retried, nothing dead-lettered', async () => {
    const drill = await startDrill(drillOptions('drill_timeout'));
    const role = `"${drill.db.role}"`;
    // A lock held elsewhere makes each batch's write wait; the role's statement_timeout cancels it.
    const lockClient = new pg.Client({
      connectionString: stack.postgresAdminUrl.replace(/\/[^/]*$/, `/${drill.db.name}`),
    });
    await runFaultDrill(drill, {
      expectedCode: /^57014$/,
      holdMs: HOLD_MS,
      start: async () => {
        await adminQuery(stack.postgresAdminUrl, `alter role ${role} set statement_timeout = '300ms'`);
        await drill.db.dropSessions();
        await lockClient.connect();
        await lockClient.query('begin');
        await lockClient.query('lock table applied_events in access exclusive mode');
      },
      repair: async () => {
        await lockClient.query('commit');
        await lockClient.end();
        await adminQuery(stack.postgresAdminUrl, `alter role ${role} reset statement_timeout`);
        await drill.db.dropSessions();
      },
    });
    await drill.close();
  });
});
