/**
 * How fast a dead consumer's partitions move: the session the runtime asks for by default, and
 * the heartbeat interval that keeps a live member from being taken for dead.
 */
import { describe, expect, it } from 'vitest';
import { heartbeatIntervalMs, SESSION_TIMEOUT_MS } from '../../../consumers/runtime/failure-detection.js';
import { seatAvailabilitySettings } from '../../../consumers/seat-availability/consumer.js';
import { parseSettings } from '../../../lib/settings.js';

/** Kafka's group.min.session.timeout.ms by default: a shorter session is refused at join. */
const BROKER_MIN_SESSION_MS = 6_000;
const REQUIRED = { CONSUMER_DATABASE_URL: 'postgres://consumers:secret@127.0.0.1:54329/stagefront_consumers' };

describe('failure detection', () => {
  it('moves a dead member’s partitions within 6 s by default, the shortest session the broker accepts', () => {
    expect(SESSION_TIMEOUT_MS).toBe(BROKER_MIN_SESSION_MS);
    const parsed = parseSettings(seatAvailabilitySettings, REQUIRED);
    expect(parsed.sessionTimeoutMs).toBe(SESSION_TIMEOUT_MS);
  });

  it('refuses a session shorter than the broker accepts, naming the variable', () => {
    expect(() => parseSettings(seatAvailabilitySettings, { ...REQUIRED, CONSUMER_SESSION_TIMEOUT_MS: '3000' })).toThrow(
      /CONSUMER_SESSION_TIMEOUT_MS/,
    );
  });

  it.each([6_000, 10_000, 18_000, 30_000, 45_000])(
    'heartbeats often enough in a %i ms session that five late ones in a row are survived',
    (session) => {
      const interval = heartbeatIntervalMs(session);
      expect(interval).toBeGreaterThan(0);
      expect(Math.floor(session / interval) - 1).toBeGreaterThanOrEqual(5);
    },
  );

  it('never heartbeats less often than kafkajs’s default of 3 s', () => {
    expect(heartbeatIntervalMs(6_000)).toBe(1_000);
    expect(heartbeatIntervalMs(60_000)).toBe(3_000);
  });
});
