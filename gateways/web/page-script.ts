/**
 * The page script: the Preact app in client/ (TypeScript, type-checked and linted with the rest), bundled by
 * esbuild once when the gateway starts (~100 ms), so there is no build step between an edit and `npm start`, and
 * nothing is fetched from another origin (no CDN: the page's CSP allows only its own scripts).
 */
import path from 'node:path';
import { buildSync } from 'esbuild';

export function bundlePageScript(clientDir = path.join(__dirname, 'client')): string {
  const result = buildSync({
    entryPoints: [path.join(clientDir, 'main.tsx')],
    bundle: true,
    write: false,
    format: 'iife',
    target: 'es2022',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    minify: true,
    legalComments: 'none',
    logLevel: 'silent',
  });
  return result.outputFiles[0]!.text;
}
