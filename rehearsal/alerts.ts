/**
 * Every alert Alertmanager holds during the rehearsal, polled each second: when it began (its own
 * startsAt, which may be long before the run), when it stopped being active, and which ones are
 * firing right now for the live view. The monitors' Watchdog heartbeats are left out: they fire
 * all the time by design.
 */
import { waitFor } from '../lib/wait.js';
import type { AlertRecord } from './record.js';

interface AlertmanagerAlert {
  fingerprint: string;
  labels: Record<string, string>;
  startsAt: string;
  status?: { state?: string };
}

interface Seen {
  name: string;
  severity: string;
  startsAt: number;
  /** When a poll last saw it active. */
  lastSeen: number;
  /** When a poll first found it gone; null while active. */
  endedAt: number | null;
}

/**
 * Alerts that mean "a program of the rehearsal is not running". Between two rehearsals their
 * programs are stopped, so these fire then; the rehearsal waits for them to resolve after it has
 * started its programs, before the run begins (see waitForOwnProgramsSeen).
 */
export const OWN_PROGRAM_ALERTS = [
  'ConsumerDown',
  'HoldSweeperDown',
  'HoldSweeperNoRecentSuccess',
  'JobWatchdogDown',
  'SlotMonitorDown',
] as const;

export class AlertWatcher {
  readonly #url: string;
  readonly #seen = new Map<string, Seen>();
  #timer: NodeJS.Timeout | undefined;
  #polling: Promise<void> | undefined;
  #firing: string[] = [];
  #polls = 0;
  #failedPolls = 0;
  #lastError = '';

  constructor(alertmanagerUrl: string) {
    this.#url = alertmanagerUrl.replace(/\/$/, '');
  }

  start(intervalMs = 1000): void {
    const tick = () => {
      this.#polling = this.poll().finally(() => {
        if (this.#timer !== undefined) this.#timer = setTimeout(tick, intervalMs);
      });
    };
    this.#timer = setTimeout(tick, 0);
  }

  async stop(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#polling;
  }

  /** One look at Alertmanager: new alerts recorded, vanished ones ended. */
  async poll(): Promise<void> {
    const now = Date.now();
    this.#polls += 1;
    let alerts: AlertmanagerAlert[];
    try {
      const response = await fetch(`${this.#url}/api/v2/alerts?active=true`, { signal: AbortSignal.timeout(3000) });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      alerts = (await response.json()) as AlertmanagerAlert[];
    } catch (err) {
      // Unknown is not "none": the report says how many polls went unanswered.
      this.#failedPolls += 1;
      this.#lastError = err instanceof Error ? err.message : String(err);
      return;
    }
    const active = alerts.filter(
      (a) => (a.status?.state ?? 'active') === 'active' && a.labels.alertname !== 'Watchdog',
    );
    const present = new Set<string>();
    for (const alert of active) {
      const key = `${alert.fingerprint}@${alert.startsAt}`;
      present.add(key);
      const known = this.#seen.get(key);
      if (known === undefined) {
        this.#seen.set(key, {
          name: alert.labels.alertname ?? '?',
          severity: alert.labels.severity ?? '',
          startsAt: Date.parse(alert.startsAt),
          lastSeen: now,
          endedAt: null,
        });
      } else {
        known.lastSeen = now;
        known.endedAt = null;
      }
    }
    for (const [key, seen] of this.#seen) if (!present.has(key) && seen.endedAt === null) seen.endedAt = now;
    this.#firing = [...new Set(active.map((a) => a.labels.alertname ?? '?'))].sort();
  }

  /** Alert names active at the last answered poll. */
  firing(): string[] {
    return this.#firing;
  }

  /** Every alert active at some moment between `from` and `to`; beganBeforeRun when it started before `from`. */
  during(from: number, to: number): AlertRecord[] {
    return [...this.#seen.values()]
      .filter((s) => s.lastSeen >= from && Math.min(s.startsAt, s.lastSeen) <= to)
      .map((s) => ({
        name: s.name,
        severity: s.severity,
        startsAt: s.startsAt,
        endsAt: s.endedAt,
        beganBeforeRun: s.startsAt < from,
      }))
      .sort((a, b) => a.startsAt - b.startsAt || a.name.localeCompare(b.name));
  }

  /** Alerts that were active only before `from` and had ended by then (shown as left out, with the reason). */
  endedBefore(from: number): AlertRecord[] {
    return [...this.#seen.values()]
      .filter((s) => s.endedAt !== null && s.lastSeen < from)
      .map((s) => ({
        name: s.name,
        severity: s.severity,
        startsAt: s.startsAt,
        endsAt: s.endedAt,
        beganBeforeRun: true,
      }));
  }

  /** "N of M polls unanswered (last error)" or undefined when Alertmanager always answered. */
  gaps(): string | undefined {
    if (this.#failedPolls === 0) return undefined;
    return `Alertmanager did not answer ${this.#failedPolls} of ${this.#polls} polls (last: ${this.#lastError})`;
  }

  /**
   * Waits until none of OWN_PROGRAM_ALERTS is active: the rehearsal has just started the programs
   * they are about, and Prometheus resolves them after its next scrape and rule evaluation. Returns
   * the names still active after `timeoutMs` (then they are real, and the report shows them).
   */
  waitForOwnProgramsSeen(timeoutMs: number): Promise<string[]> {
    return this.waitUntilResolved(OWN_PROGRAM_ALERTS, timeoutMs);
  }

  /** Waits until none of `names` is active; returns those still active after `timeoutMs`. */
  async waitUntilResolved(names: readonly string[], timeoutMs: number): Promise<string[]> {
    const active = (): string[] => this.#firing.filter((name) => names.includes(name));
    await this.poll();
    if (active().length === 0) return [];
    try {
      await waitFor(
        async () => {
          await this.poll();
          return active().length === 0;
        },
        { timeoutMs, intervalMs: 1000, description: `${names.join(', ')} to resolve` },
      );
    } catch {
      // reported by the caller
    }
    return active();
  }
}
