/**
 * Every consumer alert: Prometheus only, from the consumer runtime's metrics
 * (consumers/runtime/metrics.ts; consumer-alerts.rules.yml, generated from here).
 */
import { alert } from './alert-spec.js';
import { durationWords } from './rule-intervals.js';

const GROUP = 'consumers';

/** How long a partition is held before ConsumerHeldByFailure fires (its `for`, and its summary's words). */
const HELD_FOR = '2m';

export const CONSUMER_ALERTS = {
  ConsumerDeadLettered: alert({
    severity: 'warning',
    summary: () =>
      '{{ $labels.consumer }} dead-lettered records from {{ $labels.topic }} ({{ $labels.reason }}) in the last 15 minutes: someone must look at {{ $labels.topic }}.dlq.',
    rule: {
      group: GROUP,
      comment: [
        'Any dead-lettered record: a dead letter queue needs an owner. The second half catches the',
        'first dead letter of a process, whose counter series is new (increase() sees no rise then).',
      ],
      expr: `sum by (job, instance, consumer, topic, reason) (increase(consumer_dead_lettered_total[15m])) > 0
or
sum by (job, instance, consumer, topic, reason) (consumer_dead_lettered_total unless consumer_dead_lettered_total offset 15m)`,
      summary: {},
    },
    meaning:
      'A consumer dead-lettered at least one record in the last 15 minutes. Labels: `consumer`, `topic`, `reason`. A dead letter queue nobody owns is a queue of lost sales and lost emails, so **every** dead letter alerts. The second half of the rule catches the first dead letter of a process: its counter series is new, and `increase()` cannot see a rise in a series it has seen only once. One side effect: for its first 15 minutes, a freshly started Prometheus reports every counter above 0 as new.',
    steps: [
      '`npm run redrive -- list <topic>.dlq` shows counts per reason, a time range and sample ce_ids.',
      'Fix the cause, then redrive the matching reason ([Redrive](consumers.md#redrive-dead-letter-operations)). `deadline exceeded`, `crashed the consumer` and `data error` can usually be redriven after the fix. `not a cloudevent`, `undecodable`, `unknown schema` and `invalid payload` come from the producer: find the row in the outbox by `ce_id`.',
      'The alert resolves 15 minutes after the last dead letter, whether or not anyone redrove. The DLQ topic keeps the records for 30 days.',
    ],
  }),
  ConsumerHeldByFailure: alert({
    severity: 'warning',
    summary: () =>
      `{{ $labels.consumer }} has been held on {{ $labels.topic }} partition {{ $labels.partition }} for ${durationWords(HELD_FOR)} by an infrastructure failure ({{ $labels.error }}); its oldest waiting event is {{ $value | humanizeDuration }} old.`,
    rule: {
      group: GROUP,
      comment: [
        'A partition whose events wait on a failure that is not theirs (consumer database, registry,',
        'SMTP, Kafka): nothing is lost, but nothing behind it moves. The series exists only while held.',
      ],
      expr: 'max by (job, instance, consumer, topic, partition, error) (consumer_failing_event_age_seconds)',
      for: HELD_FOR,
      summary: {},
    },
    meaning:
      "A partition has been held by a failure that is not the record's. Labels: `consumer`, `topic`, `partition`, `error` (the SQLSTATE, socket code or error code: `25006` read-only, `42501` permission, `28P01` login, `53100` disk full, `57014` statement timeout, `ECONNREFUSED`, `smtp_unavailable`, `schema_registry_unavailable`, …). Nothing is lost and nothing is dead-lettered: the events wait in Kafka, in order. A bug in the consumer's own handler holds the partition the same way and raises [ConsumerHandlerBug](#consumerhandlerbug) as well (`error` is then the error's class, `TypeError` …).",
    steps: [
      "The consumer's log has the full error with `ce_id`, topic, partition and offset (a handler bug: with its stack trace).",
      'Fix the dependency: a failover left the consumer database read-only, a migration revoked a grant, the disk is full, SMTP or the registry is down. The consumer continues by itself and the alert resolves when the partition moves. `schema_registry_unavailable` with "does not show that it holds this consumer\'s schemas": the registry answers but is the wrong one or has lost its schemas (a wrong `SCHEMA_REGISTRY_URL` or path, wiped, restored from an old backup); the message names the URL. Point the consumer at the producers\' registry (or restore its storage) and restart it.',
    ],
  }),
  ConsumerHandlerBug: alert({
    severity: 'critical',
    summary: () =>
      'a bug in consumer {{ $labels.consumer }} holds partition {{ $labels.partition }} of {{ $labels.topic }}',
    rule: {
      group: GROUP,
      comment: [
        "A partition held because the team's own handler throws (a TypeError, a failed assertion), not",
        'because a dependency failed: it does not heal by itself, somebody has to fix the code.',
      ],
      expr: 'max by (consumer, topic, partition) (consumer_handler_bug) == 1',
      for: '1m',
      summary: {},
    },
    meaning:
      "The consumer's own handler threw on a record (a `TypeError`, a failed assertion: the handler's code, not a dependency), so the partition is held on that record. It does not heal by itself: nothing behind the record on that partition moves until the code is fixed or the record's deadline passes. Labels: `consumer`, `topic`, `partition`; the retries count as `consumer_retries_total{kind=\"handler_bug\"}`, not as infrastructure failures.",
    steps: [
      "Find the stack trace in the consumer's log: the line for the failure names the event id (`ce_id`), topic, partition and offset.",
      'Fix the handler and deploy it; the consumer retries the record with the new code and the alert resolves when the partition moves.',
      "Until then the record is retried up to its type's deadline (`EVENT_DEADLINE_MS`), then its type's policy applies (dead-letter, or keep trying), as for [ConsumerEventPastDeadline](#consumereventpastdeadline).",
      'If it was dead-lettered, [redrive](consumers.md#redrive-dead-letter-operations) it once the fix is deployed.',
    ],
  }),
  ConsumerEventPastDeadline: alert({
    severity: 'critical',
    summary: () =>
      '{{ $labels.consumer }} holds an event on {{ $labels.topic }} partition {{ $labels.partition }} past its deadline ({{ $value | humanizeDuration }} old) because of {{ $labels.error }}.',
    rule: {
      group: GROUP,
      comment: [
        "An event held by such a failure is past its type's deadline: somebody has to know now.",
        "Its type's policy applies after the late retry window (dead-letter, or keep trying).",
      ],
      expr: `max by (job, instance, consumer, topic, partition, error) (consumer_failing_event_age_seconds)
and on (job, instance, consumer, topic, partition, error)
max by (job, instance, consumer, topic, partition, error) (consumer_failing_past_deadline) == 1`,
      summary: {},
    },
    meaning:
      "An event held by such a failure is older than its type's deadline (`EVENT_DEADLINE_MS`: seat-availability 1 min, sales-ledger 15 min, confirmation-email 30 min). Somebody has to know now.",
    steps: [
      'Fix the dependency as for [ConsumerHeldByFailure](#consumerheldbyfailure).',
      'Seat availability and the sales ledger keep trying: their effects are right however late. The confirmation email dead-letters its held emails as `deadline exceeded` once they are past the deadline (and at least `LATE_RETRY_WINDOW_MS` after the failure began): decide whether they should still be sent, then [redrive](consumers.md#redrive-dead-letter-operations) them or not.',
    ],
  }),
  ConsumerEventAgeHigh: alert({
    severity: 'warning',
    summary: () =>
      '{{ $labels.consumer }} applies events from {{ $labels.topic }} {{ $value | humanizeDuration }} after they happened (p99): buyers see stale data.',
    rule: {
      group: GROUP,
      comment: ['99th percentile of (now - ce_time) when applied, over 5 minutes of events; no events, no value.'],
      expr: `histogram_quantile(0.99,
  sum by (job, instance, consumer, topic, le) (rate(consumer_event_age_seconds_bucket[5m]))
) > 60`,
      for: '5m',
      summary: {},
    },
    meaning:
      'The p99 of (apply time − `ce_time`) over 5 minutes is above 60 s, so buyers see stale availability or wait for their email. With no events flowing there is no value, and no alert.',
    steps: [
      "Look at [ConsumerLagGrowing](#consumerlaggrowing), [ConsumerHeldByFailure](#consumerheldbyfailure) and the consumer's retries (`consumer_retries_total`). Infrastructure failures (database down or read-only, SMTP 4xx) hold a partition while they back off.",
      "Look upstream: the Connect task's status (`npm run connector -- status`) and the slot alerts ([SlotInactive](#slotinactive), [SlotWalExtended](#slotwalextended)). Old events arriving late (a redrive, a lost-slot recovery's re-emit) also show up here.",
    ],
  }),
  ConsumerBacklogAging: alert({
    severity: 'warning',
    summary: () =>
      "{{ $labels.consumer }}'s oldest waiting event on {{ $labels.topic }} partition {{ $labels.partition }} is {{ $value | humanizeDuration }} old: more than a quarter of its deadline, and not handled yet.",
    rule: {
      group: GROUP,
      comment: [
        'The oldest fetched event not yet handled (an unsent email, an unapplied change) has used a quarter',
        "of its consumer's deadline: a slow or throttling provider, or a held partition, that has not failed outright.",
        'The series is absent between batches, so the rule reads its maximum over a minute.',
      ],
      expr: `max by (job, instance, consumer, topic, partition) (max_over_time(consumer_oldest_waiting_event_age_seconds[1m]))
> on (job, instance, consumer) group_left
max by (job, instance, consumer) (consumer_event_deadline_seconds) / 4`,
      for: '1m',
      summary: {},
    },
    meaning:
      "A partition's oldest event not yet handled has waited more than a quarter of the consumer's deadline (`EVENT_DEADLINE_MS`: confirmation-email 30 min, so 7.5 min; sales-ledger 3.75 min; seat-availability 15 s) for a minute. The events are in order and nothing is lost, but they are late: an email provider that is slow or answers 421/451 (the consumer lowers its pace and holds the partition a second at a time, `smtp_throttled`), a consumer outpaced by the on-sale, or a partition held by a failure. It resolves a minute after the partition catches up. Age counts from `ce_time`, so a redrive's or a re-emit's old events raise it too while they are handled.",
    steps: [
      "The consumer's log: `smtp_throttled` waits mean the provider is throttling (check its dashboard and the agreed rate, `SMTP_RATE_LIMIT`); `consumer_batch_duration_seconds` rising means a slow provider or database.",
      "A slow provider with room for more connections: raise `SMTP_CONCURRENCY` (emails in flight = rate × the provider's time per message). Otherwise add instances, up to the partition count.",
      "Past the deadline, the confirmation email's own policy applies ([ConsumerEventPastDeadline](#consumereventpastdeadline)).",
    ],
  }),
  ConsumerLagGrowing: alert({
    severity: 'warning',
    summary: () =>
      '{{ $labels.consumer }} is {{ $value }} records behind on {{ $labels.topic }} and the lag keeps growing.',
    rule: {
      group: GROUP,
      comment: ['More than 1000 records behind and still falling further behind over 10 minutes.'],
      expr: `sum by (job, instance, consumer, topic) (consumer_lag_records) > 1000
and
sum by (job, instance, consumer, topic) (delta(consumer_lag_records[10m])) > 0`,
      for: '10m',
      summary: {},
    },
    meaning:
      'More than 1000 records behind on a topic, and the lag grew over the last 10 minutes. Lag is measured after each commit.',
    steps: [
      'Is the consumer retrying (`consumer_retries_total`) or slow (`consumer_batch_duration_seconds`)? Fix the cause.',
      'If it is simply outpaced (the 10:00 burst), add instances up to the partition count (`TOPIC_PARTITIONS`, 6 by default). Consumer groups spread the partitions over them.',
    ],
  }),
  ConsumerDown: alert({
    severity: 'critical',
    summary: () =>
      'Consumer at {{ $labels.instance }} does not answer its metrics scrape: it is down or hung, and its topic is not being consumed.',
    rule: { group: GROUP, expr: 'up{job="consumers"} == 0', for: '1m', summary: {} },
    meaning:
      '`up{job="consumers"} == 0`: a consumer\'s metrics endpoint (9471 seat-availability, 9472 confirmation-email, 9473 sales-ledger, or, beside the local stack, any consumer listed in `.stack/prometheus/targets/consumers/`, the instance being its address) does not answer. The process is dead or hung, and its partitions wait for a rebalance (`CONSUMER_SESSION_TIMEOUT_MS`).',
    steps: [
      'Check the process and its last log lines. A crash loop shows as restarts.',
      'Restart it. The inbox makes redelivery harmless.',
      'Locally, a consumer killed with -9 that you will not start again: delete its file in `.stack/prometheus/targets/consumers/` (the name has its pid), and the alert resolves.',
    ],
  }),
} as const;
