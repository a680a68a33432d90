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
import type { ActivityExecuteInput, ActivityInboundCallsInterceptor, Next } from '@temporalio/worker';
import { AsyncLocalStorage } from 'node:async_hooks';
import { defaultPayloadConverter } from '@temporalio/common';
import { TURN_HEADER, type TurnHeader } from '../common/turn-trace';
import type { AppConfig } from './config';

const turns = new AsyncLocalStorage<TurnHeader | undefined>();

/** The turn the running activity belongs to (its workflow's turn-trace header), when tracing is on. */
export function currentTurn(): TurnHeader | undefined {
  return turns.getStore();
}

class TurnHeaderInbound implements ActivityInboundCallsInterceptor {
  async execute(input: ActivityExecuteInput, next: Next<ActivityInboundCallsInterceptor, 'execute'>) {
    const header = input.headers[TURN_HEADER];
    let turn: TurnHeader | undefined;
    try {
      turn = header ? (defaultPayloadConverter.fromPayload(header) as TurnHeader) : undefined;
    } catch {
      turn = undefined;
    }
    return await turns.run(turn, () => next(input));
  }
}

/**
 * Ids the next span must take (a turn's `invoke_agent` span: its ids were given to the turn's activities before it
 * could be made, workflows/turn-trace.ts). Set right before a synchronous startSpan, taken by the id generator.
 */
export const forcedSpanIds: { next: { traceId: string; spanId: string } | undefined } = { next: undefined };

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
  const { BatchSpanProcessor, RandomIdGenerator } =
    require('@opentelemetry/sdk-trace-base') as typeof TraceBase;
  const { NodeTracerProvider } = require('@opentelemetry/sdk-trace-node') as typeof TraceNode;
  const {
    OpenTelemetryActivityInboundInterceptor,
    OpenTelemetryActivityOutboundInterceptor,
    OpenTelemetryWorkflowClientInterceptor,
  } = require('@temporalio/interceptors-opentelemetry') as typeof TemporalOtel;
  /* eslint-enable @typescript-eslint/no-require-imports */
  const resource = new Resource({ 'service.name': config.serviceName ?? `durable-agent-${component}` });
  const spanProcessor = new BatchSpanProcessor(new OTLPTraceExporter({ url: config.tracesUrl }));
  const random = new RandomIdGenerator();
  const idGenerator = {
    generateTraceId: () => forcedSpanIds.next?.traceId ?? random.generateTraceId(),
    // The setter clears them right after its startSpan (which asks for the span id first, then the trace id).
    generateSpanId: () => forcedSpanIds.next?.spanId ?? random.generateSpanId(),
  };
  const provider = new NodeTracerProvider({ resource, spanProcessors: [spanProcessor], idGenerator });
  // Global tracer, W3C propagation and async context: what the interceptors' default tracer uses.
  provider.register();
  return {
    client: { workflow: [new OpenTelemetryWorkflowClientInterceptor()] },
    activity: [
      () => ({ inbound: new TurnHeaderInbound() }),
      (ctx) => ({
        inbound: new OpenTelemetryActivityInboundInterceptor(ctx),
        outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
      }),
    ],
    shutdown: () => provider.shutdown(),
  };
}
