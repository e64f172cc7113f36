/**
 * A rehearsal whose setup fails leaves nothing open: the seat service cannot open (its schema
 * registry does not answer) after the report pools and the Alertmanager watcher were opened, and
 * afterwards the environment has been closed and the process holds no more timers or sockets than
 * before (a poller still running would keep it alive). Nothing of the stack is needed: every
 * address is a port nothing listens on.
 */
import { describe, expect, it } from 'vitest';
import { parseSettings } from '../../../lib/settings.js';
import type { RehearsalEnvironment } from '../../../rehearsal/environment.js';
import { rehearseIn } from '../../../rehearsal/rehearse.js';
import { parseRehearsalConfig } from '../../../rehearsal/settings.js';
import { seatServiceSettings } from '../../../seat-service/settings.js';
import { captureLogs } from '../lib/log-capture.js';

const NOWHERE = '127.0.0.1:1';
const database = `postgres://rehearsal:secret@${NOWHERE}/nowhere`;

/** What keeps the event loop alive, counted by kind (Timeout, TCPSocketWrap, …). */
function keepingAlive(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const kind of process.getActiveResourcesInfo()) counts[kind] = (counts[kind] ?? 0) + 1;
  return counts;
}

describe('rehearseIn', () => {
  it('releases what it opened when a setup step fails: pools, the alert watcher, the environment', async () => {
    const closed: boolean[] = [];
    const env: RehearsalEnvironment = {
      mode: 'external',
      seatConfig: parseSettings(seatServiceSettings, {
        SEAT_DB_URL: database,
        SEAT_DB_ADMIN_URL: database,
        SCHEMA_REGISTRY_URL: `http://${NOWHERE}/apis/ccompat/v7`,
        DEBEZIUM_DB_PASSWORD: 'not-used-by-this-test',
        SEAT_SERVICE_DB_PASSWORD: 'not-used-by-this-test',
      }),
      seatAdminUrl: database,
      consumerAdminUrl: database,
      alertmanagerUrl: `http://${NOWHERE}`,
      slotName: 'no_slot',
      emailMessageIds: () => Promise.resolve([]),
      drillContext: () => undefined,
      unplannedRestarts: () => [],
      logFiles: () => [],
      close: (keepRunning) => {
        closed.push(keepRunning);
        return Promise.resolve();
      },
    };
    const config = parseRehearsalConfig({});
    const { logger } = captureLogs('silent');
    const before = keepingAlive();
    await expect(rehearseIn(env, config, { drills: [], showId: 'leak-test' }, logger)).rejects.toThrow(
      /schema registry .* does not answer/,
    );
    expect(closed).toEqual([false]);
    const after = keepingAlive();
    for (const [kind, count] of Object.entries(after)) expect(count, kind).toBeLessThanOrEqual(before[kind] ?? 0);
  });
});
