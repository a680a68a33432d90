/** A front end of its own for browser tests: its HTML and its bundled script on another origin than the gateway. */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import path from 'node:path';
import { buildSync, type BuildOptions } from 'esbuild';
import { freePort } from './processes';

export interface PageServer {
  port: number;
  close(): Promise<void>;
}

/** Serves `dir`/index.html and `entry` bundled for the browser as /app.js, on 127.0.0.1. */
export async function servePage(dir: string, entry: string, options: BuildOptions = {}): Promise<PageServer> {
  const script = buildSync({
    entryPoints: [path.join(dir, entry)],
    bundle: true,
    write: false,
    format: 'iife',
    platform: 'browser',
    target: 'es2022',
    logLevel: 'silent',
    ...options,
  }).outputFiles![0]!.text;
  const html = readFileSync(path.join(dir, 'index.html'), 'utf8');
  const server: Server = createServer((req, res) => {
    if (req.url === '/app.js') res.writeHead(200, { 'content-type': 'text/javascript' }).end(script);
    else res.writeHead(200, { 'content-type': 'text/html' }).end(html);
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return { port, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
