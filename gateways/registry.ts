/** The platforms this gateway serves. */
import type { RequestListener } from 'node:http';
import type { Hono } from 'hono';
import type { GatewayDeps } from './platform';
import { createSlackListener } from './slack';
import { mountWeb } from './web';

export const platforms: { name: string; mount: (app: Hono, deps: GatewayDeps) => void }[] = [
  { name: 'web', mount: mountWeb },
];

/** Platforms whose SDK brings its own HTTP receiver: requests under `prefix` go straight to it. */
export const nodePlatforms: {
  name: string;
  prefix: string;
  listener: (deps: GatewayDeps) => RequestListener | undefined;
}[] = [{ name: 'slack', prefix: '/slack/', listener: createSlackListener }];
