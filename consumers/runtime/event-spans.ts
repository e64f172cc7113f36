/**
 * A span per event a consumer applies (OpenTelemetry messaging and CloudEvents conventions):
 * `process <topic>`, kind consumer, linked to the seat service's span from the record's
 * `ce_traceparent` (the CloudEvents distributed tracing extension; a plain `traceparent` header,
 * as Kafka instrumentations write it, when that is missing). A batch is applied set-wise, so each
 * event's span runs from the start of its group's transaction to its commit. Spans are made only
 * when tracing exports them somewhere.
 */
import { type EventSpan, parseTraceparent, startEventSpan, tracingEnabled } from '../../lib/tracing.js';
import type { PartitionControl, ProcessingContext } from './context.js';
import { headerValue } from './headers.js';
import type { ConsumedEvent } from './types.js';

const TRACEPARENT_HEADERS = ['ce_traceparent', 'traceparent'] as const;

/** The producer's span context of a record: its traceparent header, when valid; an invalid one is logged (debug) and ignored. */
function producerContext(ctx: ProcessingContext, event: ConsumedEvent) {
  for (const header of TRACEPARENT_HEADERS) {
    const value = headerValue(event.record.headers, header);
    if (value === undefined) continue;
    const context = parseTraceparent(value);
    if (context === undefined)
      ctx.logger.debug({ ce_id: event.id, header, value }, 'ignoring a trace header that is not a W3C traceparent');
    return context;
  }
  return undefined;
}

export interface EventSpans {
  /** Ends every span: `applied` holds the events whose effect this delivery made (the others were duplicates). */
  end(applied: readonly ConsumedEvent[] | undefined, error?: unknown): void;
}

const NO_SPANS: EventSpans = { end: () => undefined };

export function startEventSpans(
  ctx: ProcessingContext,
  control: PartitionControl,
  events: readonly ConsumedEvent[],
): EventSpans {
  if (!tracingEnabled() || events.length === 0) return NO_SPANS;
  const startTime = Date.now();
  const spans: [ConsumedEvent, EventSpan][] = [];
  for (const event of events) {
    const attributes = {
      'messaging.system': 'kafka',
      'messaging.operation.name': 'process',
      'messaging.operation.type': 'process',
      'messaging.destination.name': control.topic,
      'messaging.destination.partition.id': String(control.partition),
      'messaging.consumer.group.name': ctx.groupId,
      'messaging.message.id': event.id,
      'messaging.kafka.offset': Number(event.record.offset),
      ...(event.key === null ? {} : { 'messaging.kafka.message.key': event.key }),
      'cloudevents.event_id': event.id,
      'cloudevents.event_source': event.source,
      'cloudevents.event_spec_version': '1.0',
      'cloudevents.event_type': event.type,
      ...(event.subject === undefined ? {} : { 'cloudevents.event_subject': event.subject }),
      'stagefront.consumer': ctx.definition.name,
    };
    const span = startEventSpan(`process ${control.topic}`, attributes, producerContext(ctx, event), startTime);
    if (span !== undefined) spans.push([event, span]);
  }
  return {
    end(applied, error) {
      const appliedIds = applied === undefined ? undefined : new Set(applied.map((event) => event.id));
      for (const [event, span] of spans) {
        if (appliedIds !== undefined)
          span.setAttribute('stagefront.inbox.outcome', appliedIds.has(event.id) ? 'applied' : 'duplicate');
        span.end(error);
      }
    },
  };
}
