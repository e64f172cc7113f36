/**
 * Builds a running slot monitor from its configuration: the shared polling monitor
 * (monitors/alerting/start-monitor.ts) reading the slots through a SlotConditionSource, which
 * keeps max_slot_wal_keep_size at its target. `stop()` releases all of it in reverse order of setup.
 */
import type { Logger } from '../../lib/logger.js';
import { startPollingMonitor, type PollingMonitorSpec, type RunningMonitor } from '../alerting/start-monitor.js';
import { ALERTS, type AlertName } from './alert-catalog.js';
import { KeepSizeGuard } from './keep-size.js';
import { SlotMonitorMetrics } from './metrics.js';
import { keepSizeMarginBytes, PROGRAM, type SlotMonitorConfig } from './settings.js';
import { SlotConditionSource } from './slot-source.js';

export type RunningSlotMonitor = RunningMonitor<AlertName>;

/** What makes the shared polling monitor the slot monitor. */
function slotMonitorSpec(config: SlotMonitorConfig, logger: Logger): PollingMonitorSpec<AlertName, SlotMonitorMetrics> {
  return {
    program: PROGRAM,
    monitorName: 'slot monitor',
    catalog: ALERTS,
    messages: { unreachable: 'cannot poll the seat database', reachable: 'polling the seat database' },
    createMetrics: (registry) =>
      new SlotMonitorMetrics(registry, config.maxSlotWalKeepSize, keepSizeMarginBytes(config)),
    createSource: ({ db, databaseLabel, metrics }) => {
      const keepSize = new KeepSizeGuard({
        targetBytes: config.maxSlotWalKeepSize,
        marginBytes: keepSizeMarginBytes(config),
        mode: config.keepSizeMode,
        noticeDurationMs: config.noticeDurationMs,
        logger,
        onCorrected: () => metrics.recordCorrection(),
        onRaiseHeld: (raise) => metrics.recordRaiseHeld(raise !== undefined),
      });
      const outbox = { schema: config.outboxSchema, table: config.outboxTable };
      const standby = {
        standbyUrls: config.standbyUrls,
        standbySlotMaxLagBytes: config.standbySlotMaxLag,
        slots: config.slots,
      };
      return new SlotConditionSource({
        db,
        databaseLabel,
        databaseUrl: config.databaseUrl,
        standby,
        rules: config,
        outbox,
        growthWindowPolls: config.growthWindowPolls,
        keepSize,
        metrics,
      });
    },
  };
}

export async function startSlotMonitor(config: SlotMonitorConfig, logger: Logger): Promise<RunningSlotMonitor> {
  return startPollingMonitor(slotMonitorSpec(config, logger), config, logger);
}
