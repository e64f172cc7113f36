/**
 * Traces through the outbox, the only program module that imports OpenTelemetry (eslint refuses it
 * elsewhere; the tests also read spans with its SDK).
 *
 * The seat service starts a span per business operation and writes its W3C `traceparent` with
 * each outbox row; the router places it in the `ce_traceparent` header (the CloudEvents
 * distributed tracing extension in Kafka binary mode); each consumer starts a span per event
 * *linked* to it (a consumer span is no child of the producer's: one hold's events reach several
 * consumers, each in its own batch, at its own time).
 *
 * A program calls {@link startTracing} once; spans are exported over OTLP (HTTP/protobuf) when an
 * endpoint is set. Without it the seat service still gets real span ids for its traceparents (so
 * every event can be followed in the logs), and the consumers record no spans at all.
 */
import {
  type Attributes,
  defaultTextMapSetter,
  type Link,
  ROOT_CONTEXT,
  type Span,
  type SpanContext,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  trace,
} from '@opentelemetry/api';
import { TRACE_PARENT_HEADER, W3CTraceContextPropagator, parseTraceParent } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  SimpleSpanProcessor,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { errorMessage } from './errors.js';
import type { Logger } from './logger.js';
import { type SettingParser, zUrl } from './setting-parsers.js';
import { z } from 'zod';

const TRACER_NAME = 'stagefront';

/** The OTLP endpoint as a setting: a base URL (`/v1/traces` is appended, as OpenTelemetry's own variable means it), or empty. */
export const otlpEndpointSetting = {
  env: 'OTEL_EXPORTER_OTLP_ENDPOINT',
  default: '',
  parser: otlpEndpointParser(),
  description:
    'OpenTelemetry collector to send traces to over OTLP HTTP/protobuf (base URL; /v1/traces is appended). Empty: no export.',
} as const;

function otlpEndpointParser(): SettingParser<string> {
  const url = zUrl({ protocols: ['http', 'https'], example: 'http://127.0.0.1:4318' });
  return { schema: z.union([z.literal(''), url.schema]), expected: `${url.expected}, or empty`, example: url.example };
}

interface TracingState {
  provider: BasicTracerProvider;
  /** Spans are recorded and handed to an exporter. */
  exporting: boolean;
}

/** Before startTracing: real ids, nothing recorded beyond the span objects, nothing exported. */
let state: TracingState = { provider: new BasicTracerProvider(), exporting: false };

export interface TracingOptions {
  /** `service.name` of every span: the program (`seat-service`, `seat-availability`). */
  serviceName: string;
  /** OTLP base URL; empty: no OTLP export. */
  otlpEndpoint: string;
  logger: Logger;
  /** More exporters, each behind a simple (unbatched) processor: tests pass an in-memory one. */
  exporters?: readonly SpanExporter[];
}

export interface Tracing {
  /** Sends what is still buffered and stops exporting. */
  shutdown(): Promise<void>;
}

/** Installs this process's tracer: spans go to the OTLP endpoint (batched) and to `exporters`. */
export function startTracing(options: TracingOptions): Tracing {
  const processors: SpanProcessor[] = (options.exporters ?? []).map((exporter) => new SimpleSpanProcessor(exporter));
  if (options.otlpEndpoint !== '') {
    const url = `${options.otlpEndpoint.replace(/\/+$/, '')}/v1/traces`;
    processors.push(new BatchSpanProcessor(new OTLPTraceExporter({ url })));
    options.logger.info({ url }, 'exporting traces over OTLP');
  }
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': options.serviceName }),
    spanProcessors: processors,
  });
  const previous = state.provider;
  state = { provider, exporting: processors.length > 0 };
  void previous.shutdown();
  return {
    async shutdown() {
      if (state.provider === provider) state = { provider: new BasicTracerProvider(), exporting: false };
      try {
        await provider.shutdown();
      } catch (err) {
        options.logger.warn({ error: errorMessage(err) }, 'could not send the last traces');
      }
    },
  };
}

/** True when spans are exported somewhere: without it, consumers skip making them. */
export function tracingEnabled(): boolean {
  return state.exporting;
}

// ── traceparent (W3C Trace Context) ─────────────────────────────────────────────────────────────

const propagator = new W3CTraceContextPropagator();

/** The `traceparent` of a span context, as OpenTelemetry's W3C propagator writes it (only the sampled flag kept). */
function formatTraceparent(context: SpanContext): string {
  const carrier: Record<string, string> = {};
  const sampled = { ...context, traceFlags: context.traceFlags & TraceFlags.SAMPLED };
  propagator.inject(trace.setSpanContext(ROOT_CONTEXT, sampled), carrier, defaultTextMapSetter);
  const traceparent = carrier[TRACE_PARENT_HEADER];
  if (traceparent === undefined)
    throw new Error(`a span without valid ids has no traceparent: ${JSON.stringify(context)}`);
  return traceparent;
}

/**
 * The remote span context of a `traceparent`, or undefined when it is not one (OpenTelemetry's
 * W3C parser decides): an unknown version `ff`, all-zero ids, or anything that is not the W3C
 * format. A later version may add fields after the four (`-…`); version 00 may not.
 */
export function parseTraceparent(value: string | undefined): SpanContext | undefined {
  const parsed = value === undefined ? null : parseTraceParent(value.trim());
  if (parsed === null) return undefined;
  return { ...parsed, traceFlags: parsed.traceFlags & TraceFlags.SAMPLED, isRemote: true };
}

// ── spans ───────────────────────────────────────────────────────────────────────────────────────

export interface OperationSpan {
  /** The W3C traceparent of this span: what the operation writes with its events. */
  traceparent: string;
  end(error?: unknown): void;
}

/** A span for one business operation (a hold, a confirm): always with real ids, exported when tracing is on. */
export function startOperationSpan(name: string, attributes: Attributes = {}): OperationSpan {
  const span = state.provider.getTracer(TRACER_NAME).startSpan(name, { kind: SpanKind.INTERNAL, attributes });
  return { traceparent: formatTraceparent(span.spanContext()), end: (error) => endSpan(span, error) };
}

/** Runs `operation` inside an operation span; the span records a thrown error. */
export async function traced<T>(
  name: string,
  attributes: Attributes,
  operation: (span: OperationSpan) => Promise<T>,
): Promise<T> {
  const span = startOperationSpan(name, attributes);
  try {
    const result = await operation(span);
    span.end();
    return result;
  } catch (err) {
    span.end(err);
    throw err;
  }
}

/** A traceparent from a fresh span context: for events written outside any operation span. */
export function freshTraceparent(): string {
  const span = state.provider.getTracer(TRACER_NAME).startSpan('outbox write', { kind: SpanKind.INTERNAL });
  span.end();
  return formatTraceparent(span.spanContext());
}

export interface EventSpan {
  end(error?: unknown): void;
  setAttribute(key: string, value: string | number | boolean): void;
}

/**
 * A consumer span for one event, linked to the producer's span context when there is one.
 * Undefined when tracing is off (the runtime records nothing then).
 */
export function startEventSpan(
  name: string,
  attributes: Attributes,
  producer: SpanContext | undefined,
  startTime: number,
): EventSpan | undefined {
  if (!state.exporting) return undefined;
  const links: Link[] = producer === undefined ? [] : [{ context: producer }];
  const span = state.provider
    .getTracer(TRACER_NAME)
    .startSpan(name, { kind: SpanKind.CONSUMER, attributes, links, startTime });
  return { end: (error) => endSpan(span, error), setAttribute: (key, value) => span.setAttribute(key, value) };
}

function endSpan(span: Span, error: unknown): void {
  if (error !== undefined) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: errorMessage(error) });
    span.setAttribute('error.type', error instanceof Error ? error.name : 'error');
  }
  span.end();
}
