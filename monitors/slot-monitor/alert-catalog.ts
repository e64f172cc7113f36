/**
 * The alerts the slot monitor raises in process: its part of the alert catalogue
 * (monitors/alerts/slot-alerts.ts, the one source of each alert's severity, summary and runbook)
 * and its heartbeat. The summary and description of each firing are written by the code that
 * detects it (slot-conditions.ts, keep-size.ts, standby-slots.ts, wal-rate.ts, slot-source.ts)
 * from the catalogue's sentence with the numbers of that moment.
 */
import { HEARTBEAT_ALERTS } from '../alerts/heartbeat-alerts.js';
import { SLOT_ALERTS } from '../alerts/slot-alerts.js';

const { SlotMonitorDown: _prometheusOnly, ...raisedInProcess } = SLOT_ALERTS;

export const ALERTS = { ...raisedInProcess, Watchdog: HEARTBEAT_ALERTS.Watchdog };

export type AlertName = keyof typeof ALERTS;
