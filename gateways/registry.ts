/** The platforms this gateway serves. */
import type { Hono } from 'hono';
import type { GatewayDeps } from './platform';
import { mountWeb } from './web';

export const platforms: { name: string; mount: (app: Hono, deps: GatewayDeps) => void }[] = [
  { name: 'web', mount: mountWeb },
];
