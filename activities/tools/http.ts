/** http_request: one request with a timeout; the response body is capped. */
import type { ToolRunResult } from '../types';
import { capOutput } from './output-cap';

export async function runHttpRequest(input: {
  method: string;
  url: string;
  headers?: Record<string, string> | undefined;
  body?: string | undefined;
  signal?: AbortSignal;
}): Promise<ToolRunResult> {
  const timeout = AbortSignal.timeout(30_000);
  const signal = input.signal ? AbortSignal.any([timeout, input.signal]) : timeout;
  try {
    const response = await fetch(input.url, {
      method: input.method,
      headers: input.headers,
      body: input.method === 'GET' || input.method === 'HEAD' ? undefined : input.body,
      signal,
      redirect: 'follow',
    });
    const body = await response.text();
    const type = response.headers.get('content-type') ?? 'unknown';
    return {
      status: response.ok ? 'ok' : 'error',
      content: `HTTP ${response.status} ${response.statusText}\ncontent-type: ${type}\n\n${capOutput(body)}`,
    };
  } catch (error) {
    return { status: 'error', content: `request failed: ${(error as Error).message}` };
  }
}
