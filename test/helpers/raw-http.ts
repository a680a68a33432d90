/** HTTP the way an attacker sends it, for the security suites: any Host, any request target. */
import { request as httpRequest } from 'node:http';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A raw HTTP/1.1 request to 127.0.0.1: any Host header, any request target (fetch forges neither). */
export async function rawRequest(
  port: number,
  options: { method: string; path: string; headers: Record<string, string>; body?: string },
): Promise<RawResponse> {
  return await new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method: options.method,
        path: options.path,
        headers: options.headers,
        setHost: false,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          body += chunk;
          if (body.length > 4_000) res.destroy();
        });
        const done = () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
        res.on('end', done);
        res.on('close', done);
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

/** True when a web session's workflow exists (an attempt started or signalled it). */
export async function webSessionExists(client: Client, sessionId: string): Promise<boolean> {
  try {
    await client.workflow.getHandle(`session:web:${sessionId}`).describe();
    return true;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return false;
    throw error;
  }
}
