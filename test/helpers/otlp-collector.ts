/**
 * An OpenTelemetry collector for tests: receives OTLP/HTTP JSON trace exports (`POST /v1/traces`, the
 * protocol the OTLP HTTP exporter speaks) and keeps every span with the service that sent it.
 */
import { createServer, type Server } from 'node:http';

export interface CollectedSpan {
  service: string;
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  attributes: Record<string, unknown>;
  /** Milliseconds since the epoch (OTLP sends nanoseconds). */
  startMs: number;
  endMs: number;
}

type OtlpValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean };
type OtlpAttribute = { key: string; value: OtlpValue };
interface OtlpExport {
  resourceSpans?: {
    resource?: { attributes?: OtlpAttribute[] };
    scopeSpans?: {
      spans?: {
        name: string;
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        attributes?: OtlpAttribute[];
        startTimeUnixNano?: string | number;
        endTimeUnixNano?: string | number;
      }[];
    }[];
  }[];
}

const valueOf = (v: OtlpValue) => v.stringValue ?? v.intValue ?? v.boolValue;

export class OtlpCollector {
  readonly spans: CollectedSpan[] = [];
  /** Every request body, verbatim (a test proves no secret is in any). */
  readonly raw: string[] = [];
  private server: Server | undefined;
  url = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk));
      req.on('end', () => {
        if (req.url !== '/v1/traces' || req.method !== 'POST') return res.writeHead(404).end();
        this.raw.push(body);
        const parsed = JSON.parse(body) as OtlpExport;
        for (const group of parsed.resourceSpans ?? []) {
          const service = String(
            valueOf(group.resource?.attributes?.find((a) => a.key === 'service.name')?.value ?? {}) ?? '',
          );
          for (const scope of group.scopeSpans ?? [])
            for (const span of scope.spans ?? [])
              this.spans.push({
                service,
                name: span.name,
                traceId: span.traceId,
                spanId: span.spanId,
                parentSpanId: span.parentSpanId || undefined,
                attributes: Object.fromEntries((span.attributes ?? []).map((a) => [a.key, valueOf(a.value)])),
                startMs: Number(BigInt(span.startTimeUnixNano ?? 0) / 1_000_000n),
                endMs: Number(BigInt(span.endTimeUnixNano ?? 0) / 1_000_000n),
              });
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as { port: number }).port}`;
    return this;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
