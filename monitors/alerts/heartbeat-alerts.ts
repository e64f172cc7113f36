/**
 * The heartbeat every sender of alerts raises: the slot monitor's, the job watchdog's
 * (monitors/alerting/alert-publisher.ts) and Prometheus's own (in slot-alerts.rules.yml).
 */
import { alert } from './alert-spec.js';

export const HEARTBEAT_ALERTS = {
  Watchdog: alert<{ sender: string }>({
    severity: 'none',
    summary: ({ sender }) => `${sender} is alive: this alert always fires while it runs; page when it stops arriving.`,
    rule: { group: 'slot-monitor', expr: 'vector(1)', summary: { sender: 'Prometheus (evaluating the slot rules)' } },
    meaning:
      "Always firing while its sender runs (the Alertmanager convention): the slot monitor's (`service=\"slot-monitor\"`), the job watchdog's (`service=\"job-watchdog\"`), and Prometheus's own (from `slot-alerts.rules.yml`, while it evaluates rules). Route it to a dead man's switch that pages when it **stops** arriving, and keep it out of every human receiver; the shipped routing does ([Alertmanager routing](#alertmanager-routing)). A monitor's Watchdog stops when the process is dead or cannot reach Alertmanager; Alertmanager then resolves it after `4 × max(resend interval, poll interval)` (`SLOT_MONITOR_ALERTMANAGER_RESEND_MS`, `SLOT_MONITOR_POLL_INTERVAL_MS`, or the `JOB_WATCHDOG_` ones).",
    steps: [
      'The `service` label names the sender (none: Prometheus). Check that process (`systemctl status`, `kubectl get pods`, …) and its last log lines.',
      "Check it can reach Alertmanager: a monitor's log shows `delivery to alertmanager failed` lines.",
    ],
  }),
} as const;
