/** OUTBOX_RETENTION_MS against Kafka's retention and lost-slot recovery's look-back, checked at start. */
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../lib/settings.js';
import { consumerInboxSettings } from '../../../monitors/reconciliation/settings.js';
import { slotRecoverySettings } from '../../../monitors/slot-recovery/settings.js';
import { connectorSettings } from '../../../connectors/settings.js';
import { parseSeatServiceConfig, seatServiceSettings } from '../../../seat-service/settings.js';

const DAY = 86_400_000;
const required = {
  SEAT_DB_URL: 'postgres://s:s@127.0.0.1:5432/seats',
  SEAT_DB_ADMIN_URL: 'postgres://a:a@127.0.0.1:5432/seats',
  SEAT_SERVICE_DB_PASSWORD: 'x',
  DEBEZIUM_DB_PASSWORD: 'y',
};

function problems(env: Record<string, string>): string[] {
  try {
    parseSeatServiceConfig({ ...required, ...env });
    return [];
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return [...err.problems];
  }
}

describe('outbox retention', () => {
  it('by default is longer than Kafka keeps events and than recovery looks back', () => {
    const config = parseSeatServiceConfig(required);
    expect(config.outboxRetentionMs).toBe(14 * DAY);
    expect(config.outboxRetentionMs).toBeGreaterThan(config.eventTopicRetentionMs);
    expect(config.outboxRetentionMs).toBeGreaterThan(config.reconcileWindowMs + config.recoveryMarginMs);
  });

  it('equal to the Kafka retention is refused, naming the setting and the fix', () => {
    const found = problems({ OUTBOX_RETENTION_MS: String(7 * DAY), RECONCILE_WINDOW_MS: String(DAY) });
    expect(found).toEqual([
      expect.stringMatching(
        /^OUTBOX_RETENTION_MS=604800000 \(7 days\) must be longer than EVENT_TOPIC_RETENTION_MS=604800000 .*raise OUTBOX_RETENTION_MS to more than 604800000/,
      ),
    ]);
  });

  it('not longer than the reconciliation window plus the recovery margin is refused', () => {
    const found = problems({
      OUTBOX_RETENTION_MS: String(10 * DAY),
      RECONCILE_WINDOW_MS: String(10 * DAY),
      SLOT_RECOVERY_SAFETY_MARGIN_MS: '0',
    });
    expect(found).toEqual([
      expect.stringMatching(
        /^OUTBOX_RETENTION_MS=864000000 \(10 days\) must be longer than RECONCILE_WINDOW_MS \+ SLOT_RECOVERY_SAFETY_MARGIN_MS \(10 days\), how far back lost-slot recovery re-emits/,
      ),
    ]);
    expect(
      problems({
        OUTBOX_RETENTION_MS: String(10 * DAY),
        RECONCILE_WINDOW_MS: String(10 * DAY - 1),
        SLOT_RECOVERY_SAFETY_MARGIN_MS: '0',
      }),
    ).toEqual([]);
  });

  it('reads the very variables, with the very defaults, that the connector command, reconciliation and the recovery read', () => {
    const s = seatServiceSettings.settings;
    expect([s.reconcileWindowMs.env, s.reconcileWindowMs.default]).toEqual([
      consumerInboxSettings.windowMs.env,
      consumerInboxSettings.windowMs.default,
    ]);
    expect([s.recoveryMarginMs.env, s.recoveryMarginMs.default]).toEqual([
      slotRecoverySettings.settings.safetyMarginMs.env,
      slotRecoverySettings.settings.safetyMarginMs.default,
    ]);
    expect([s.slotName.env, s.slotName.default]).toEqual([
      connectorSettings.settings.slotName.env,
      connectorSettings.settings.slotName.default,
    ]);
  });
});
