/** The page's entry point: bundled by esbuild when the gateway starts (gateways/web/page-script.ts). */
import { render } from 'preact';
import { App } from './app';

render(<App />, document.getElementById('app')!);
