/**
 * Optional OpenTelemetry tracing through the Temporal SDK's own interceptors
 * (`@temporalio/interceptors-opentelemetry`): on when an OTLP endpoint is configured
 * (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), off otherwise at no cost (not even loading).
 * Traced: every client call of the gateway and the worker (start, signal, query, update) and every
 * activity run, with the workflow id on each span. Not traced: the workflow's own steps (see
 * workers/workflow-code.ts for why). Spans hold ids and names, never payloads.
 */
import type * as OtlpHttp from '@opentelemetry/exporter-trace-otlp-http';
import type * as OtelResources from '@opentelemetry/resources';
import type * as TraceBase from '@opentelemetry/sdk-trace-base';
import type * as TraceNode from '@opentelemetry/sdk-trace-node';
import type * as TemporalOtel from '@temporalio/interceptors-opentelemetry';
import type { ClientInterceptors } from '@temporalio/client';
import type { WorkerInterceptors } from '@temporalio/worker';
import type { AppConfig } from './config';

/** The pieces, not the SDK's OpenTelemetryPlugin, which would also add the workflow interceptors. */
export interface Tracing {
  client: ClientInterceptors;
  activity: NonNullable<WorkerInterceptors['activity']>;
  /** Flushes the spans not yet sent. */
  shutdown(): Promise<void>;
}

export function startTracing(
  config: AppConfig['tracing'],
  component: 'worker' | 'gateway',
): Tracing | undefined {
  if (!config.tracesUrl) return undefined;
  // Loaded only when tracing is on: these packages take about 0.3 s to load, which every worker start would pay.
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-http') as typeof OtlpHttp;
  const { Resource } = require('@opentelemetry/resources') as typeof OtelResources;
  const { BatchSpanProcessor } = require('@opentelemetry/sdk-trace-base') as typeof TraceBase;
  const { NodeTracerProvider } = require('@opentelemetry/sdk-trace-node') as typeof TraceNode;
  const {
    OpenTelemetryActivityInboundInterceptor,
    OpenTelemetryActivityOutboundInterceptor,
    OpenTelemetryWorkflowClientInterceptor,
  } = require('@temporalio/interceptors-opentelemetry') as typeof TemporalOtel;
  /* eslint-enable @typescript-eslint/no-require-imports */
  const resource = new Resource({ 'service.name': config.serviceName ?? `durable-agent-${component}` });
  const spanProcessor = new BatchSpanProcessor(new OTLPTraceExporter({ url: config.tracesUrl }));
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
    shutdown: () => provider.shutdown(),
  };
}
