/**
 * Turns "conditions that hold now" (candidates, computed on every poll) into alert lifecycles:
 * an alert starts when its condition first appears and resolves when it is gone, never once per poll.
 * Shared by the monitors; each brings its view of the alert catalogue (monitors/alerts/: severity and
 * runbook steps per name).
 */
import { runbookText, runbookUrl, type AnyAlertSpec, type Severity } from '../alerts/alert-spec.js';

export { RUNBOOK_DOCUMENT, runbookUrl } from '../alerts/alert-spec.js';

/** What the tracker needs of an alert's catalogue entry (monitors/alerts/): severity and steps. */
type AlertDefinition = Pick<AnyAlertSpec, 'severity' | 'steps'>;

export interface AlertTrackerOptions {
  /** Labels every alert of this monitor carries: service, database. */
  staticLabels: Record<string, string>;
  /** The generatorURL of every alert: the monitor's /metrics, where the numbers behind it can be read. */
  generatorUrl: string;
}

/** Every alert a monitor can raise, by name. */
export type AlertCatalog<Name extends string> = Readonly<Record<Name, AlertDefinition>>;

/** A condition that holds at this poll. Same name and labels across polls = the same alert. */
export interface AlertCandidate<Name extends string = string> {
  name: Name;
  /** Identity labels besides alertname, e.g. { slot_name: 'stagefront' }. */
  labels: Record<string, string>;
  /** One line a person woken at 3 a.m. understands. */
  summary: string;
  /** The numbers behind it. */
  description: string;
}

export interface TrackedAlert<Name extends string = string> {
  name: Name;
  severity: Severity;
  /** alertname, severity, the static labels and the candidate's labels. */
  labels: Record<string, string>;
  /** summary and description of the latest poll, the runbook steps, and runbook_url (its section in docs/operations.md). */
  annotations: { summary: string; description: string; runbook: string; runbook_url: string };
  generatorUrl: string;
  startsAt: Date;
  /** Set once resolved. */
  endsAt: Date | undefined;
}

export interface AlertEvent<Name extends string = string> {
  kind: 'firing' | 'resolved';
  alert: TrackedAlert<Name>;
}

function identity(name: string, labels: Record<string, string>): string {
  const sorted = Object.keys(labels)
    .sort()
    .map((key) => `${key}=${labels[key]}`);
  return `${name}{${sorted.join(',')}}`;
}

export class AlertTracker<Name extends string> {
  readonly #catalog: AlertCatalog<Name>;
  readonly #staticLabels: Record<string, string>;
  readonly #generatorUrl: string;
  readonly #active = new Map<string, TrackedAlert<Name>>();
  #resolved: TrackedAlert<Name>[] = [];

  constructor(catalog: AlertCatalog<Name>, options: AlertTrackerOptions) {
    this.#catalog = catalog;
    this.#staticLabels = options.staticLabels;
    this.#generatorUrl = options.generatorUrl;
  }

  /** Applies this poll's candidates; returns the alerts that started and those that resolved. */
  update(candidates: readonly AlertCandidate<Name>[], now: Date): AlertEvent<Name>[] {
    const events: AlertEvent<Name>[] = [];
    const seen = new Set<string>();
    for (const candidate of candidates) {
      const key = identity(candidate.name, candidate.labels);
      seen.add(key);
      const existing = this.#active.get(key);
      if (existing) {
        existing.annotations = {
          ...existing.annotations,
          summary: candidate.summary,
          description: candidate.description,
        };
        continue;
      }
      const alert = this.#track(candidate, now);
      this.#active.set(key, alert);
      events.push({ kind: 'firing', alert });
    }
    for (const [key, alert] of this.#active) {
      if (seen.has(key)) continue;
      this.#active.delete(key);
      alert.endsAt = now;
      this.#resolved.push(alert);
      events.push({ kind: 'resolved', alert });
    }
    return events;
  }

  #track(candidate: AlertCandidate<Name>, now: Date): TrackedAlert<Name> {
    const definition = this.#catalog[candidate.name];
    const { severity } = definition;
    return {
      name: candidate.name,
      severity,
      labels: { alertname: candidate.name, severity, ...this.#staticLabels, ...candidate.labels },
      annotations: {
        summary: candidate.summary,
        description: candidate.description,
        runbook: runbookText(definition),
        runbook_url: runbookUrl(candidate.name),
      },
      generatorUrl: this.#generatorUrl,
      startsAt: now,
      endsAt: undefined,
    };
  }

  active(): TrackedAlert<Name>[] {
    return [...this.#active.values()];
  }

  /** Candidates of the alerts active now, to carry them over a poll that could not see the database. */
  activeCandidates(filter: (alert: TrackedAlert<Name>) => boolean): AlertCandidate<Name>[] {
    const staticKeys = new Set(['alertname', 'severity', ...Object.keys(this.#staticLabels)]);
    return this.active()
      .filter(filter)
      .map((alert) => ({
        name: alert.name,
        labels: Object.fromEntries(Object.entries(alert.labels).filter(([key]) => !staticKeys.has(key))),
        summary: alert.annotations.summary,
        description: alert.annotations.description,
      }));
  }

  /** Alerts resolved within `retentionMs`, re-sent so a lost "resolved" still reaches Alertmanager (as Prometheus does). */
  recentlyResolved(now: Date, retentionMs: number): TrackedAlert<Name>[] {
    this.#resolved = this.#resolved.filter((alert) => (alert.endsAt?.getTime() ?? 0) > now.getTime() - retentionMs);
    return [...this.#resolved];
  }
}
