/**
 * How fast the group notices a consumer instance that died. kafkajs sends heartbeats from the
 * consumer's own loop (after each fetch, and while a partition is held), so a member is declared
 * dead when no heartbeat reached the coordinator for a whole session.
 *
 * 6 s is the broker's smallest session by default (group.min.session.timeout.ms): a member killed
 * with -9 loses its partitions about 6 s later instead of 30 s. A heartbeat every sixth of the
 * session lets five in a row be late (a busy event loop, a slow fetch) before a live member is
 * taken for dead.
 */

/** The consumers' session timeout unless CONSUMER_SESSION_TIMEOUT_MS says otherwise. */
export const SESSION_TIMEOUT_MS = 6_000;

/** The heartbeat interval for a session: a sixth of it, at most 3 s (kafkajs's default). */
export function heartbeatIntervalMs(sessionTimeoutMs: number): number {
  return Math.min(3_000, Math.floor(sessionTimeoutMs / 6));
}
