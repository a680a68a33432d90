/**
 * Optional OpenTelemetry tracing through the Temporal SDK's own interceptors
 * (`@temporalio/interceptors-opentelemetry`): on when an OTLP endpoint is configured
 * (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), off otherwise at no cost.
 * The gateway's client calls (start, signal, update, query), the workflow's steps (exported through a
 * sink, so replays export nothing twice) and the activities share one trace per request, because the
 * interceptors carry the trace context in Temporal headers. Spans hold ids and names, never payloads.
 */
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  type ReadableSpan,
  type Span,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import type { Context } from '@opentelemetry/api';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import {
  makeWorkflowExporter,
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
  OpenTelemetryWorkflowClientInterceptor,
} from '@temporalio/interceptors-opentelemetry';
import type { ClientInterceptors } from '@temporalio/client';
import type { InjectedSinks, WorkerInterceptors } from '@temporalio/worker';
import type { OpenTelemetrySinks } from '@temporalio/interceptors-opentelemetry';
import type { AppConfig } from './config';

/**
 * The pieces, not the SDK's OpenTelemetryPlugin: the workflow interceptors are already in every bundle
 * (workers/workflow-code.ts), and the plugin would add them a second time.
 */
export interface Tracing {
  client: ClientInterceptors;
  activity: NonNullable<WorkerInterceptors['activity']>;
  /** Replaces the no-op span sink the workflow interceptors call. */
  sinks: InjectedSinks<OpenTelemetrySinks>;
  /** Flushes the spans not yet sent. */
  shutdown(): Promise<void>;
}

/**
 * Workflow spans carry the whole workflow info as attributes, memo and search attributes included: what
 * a session waits for (a command line, say) would reach the tracing backend in clear, even with payload
 * encryption on. Those attributes are dropped before export; ids, types, queue and attempt stay.
 */
const WORKFLOW_DATA = [
  'memo',
  'searchAttributes',
  'typedSearchAttributes',
  'lastResult',
  'lastFailure',
  'unsafe',
];

class WithoutWorkflowData implements SpanProcessor {
  constructor(private readonly next: SpanProcessor) {}
  onStart(span: Span, context: Context): void {
    this.next.onStart(span, context);
  }
  onEnd(span: ReadableSpan): void {
    const attributes = span.attributes as Record<string, unknown>;
    for (const key of WORKFLOW_DATA) delete attributes[key];
    this.next.onEnd(span);
  }
  forceFlush(): Promise<void> {
    return this.next.forceFlush();
  }
  shutdown(): Promise<void> {
    return this.next.shutdown();
  }
}

export function startTracing(
  config: AppConfig['tracing'],
  component: 'worker' | 'gateway',
): Tracing | undefined {
  if (!config.tracesUrl) return undefined;
  const resource = new Resource({ 'service.name': config.serviceName ?? `durable-agent-${component}` });
  const spanProcessor = new WithoutWorkflowData(
    new BatchSpanProcessor(new OTLPTraceExporter({ url: config.tracesUrl })),
  );
  const provider = new NodeTracerProvider({ resource, spanProcessors: [spanProcessor] });
  // Global tracer, W3C propagation and async context: what the interceptors' default tracer uses.
  provider.register();
  return {
    client: { workflow: [new OpenTelemetryWorkflowClientInterceptor()] },
    activity: [
      (ctx) => ({
        inbound: new OpenTelemetryActivityInboundInterceptor(ctx),
        outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
      }),
    ],
    sinks: { exporter: makeWorkflowExporter(spanProcessor, resource) },
    shutdown: () => provider.shutdown(),
  };
}
