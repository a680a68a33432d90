/**
 * Request bodies are bounded per endpoint before anything parses them or checks a signature: a declared
 * length over the limit is refused at once, and a body that turns out longer is cut off while it streams.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';

const KB = 1024;
const LIMITS: [prefix: string, bytes: number][] = [
  ['/slack/', 1024 * KB],
  ['/discord/', 64 * KB],
  // An AG-UI client sends the whole conversation it holds with each run (only its last message is read).
  ['/api/agui', 2 * 1024 * KB],
  ['/api/', 64 * KB],
  ['/oauth/', 16 * KB],
  ['/auth/', 16 * KB],
  ['/hooks/', 16 * KB],
  // The Temporal UI's codec requests carry whole payloads (transcripts) to decode.
  ['/codec', 4 * 1024 * KB],
  // Workers' streamed answers: up to 100,000 characters of partial text (3 bytes each in some scripts), as JSON.
  ['/internal/stream', 512 * KB],
];
const DEFAULT_LIMIT = 64 * KB;

export function bodyLimitFor(path: string): number {
  return LIMITS.find(([prefix]) => path.startsWith(prefix))?.[1] ?? DEFAULT_LIMIT;
}

const tooLarge = (limit: number) =>
  JSON.stringify({ error: `the body is larger than this endpoint accepts (${Math.round(limit / KB)} KB)` });

/** Refuses (413) a request whose declared length is over its endpoint's limit; true when it did. */
export function refuseDeclaredOversize(req: IncomingMessage, res: ServerResponse): boolean {
  const limit = bodyLimitFor(new URL(req.url ?? '/', 'http://x').pathname);
  const declared = Number(req.headers['content-length'] ?? 0);
  if (!(declared > limit)) return false;
  res.writeHead(413, { 'content-type': 'application/json', connection: 'close' }).end(tooLarge(limit));
  return true;
}

/** The same limits for bodies that arrive without a length (chunked), while they are read. */
export function bodyLimits(): MiddlewareHandler {
  return async (c, next) => {
    const limit = bodyLimitFor(c.req.path);
    return await bodyLimit({
      maxSize: limit,
      onError: (ctx) => ctx.body(tooLarge(limit), 413, { 'content-type': 'application/json' }),
    })(c, next);
  };
}
