/**
 * Optional OpenTelemetry tracing through the Temporal SDK's own interceptors
 * (`@temporalio/interceptors-opentelemetry`): on when an OTLP endpoint is configured
 * (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), off otherwise at no cost.
 * Traced: every client call of the gateway and the worker (start, signal, query, update) and every
 * activity run, with the workflow id on each span. Not traced: the workflow's own steps (see
 * workers/workflow-code.ts for why). Spans hold ids and names, never payloads.
 */
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import {
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
  OpenTelemetryWorkflowClientInterceptor,
} from '@temporalio/interceptors-opentelemetry';
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
