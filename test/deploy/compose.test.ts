/** No Docker engine runs in CI, so the deployment files are checked by reading them against the code. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const ROOT = path.resolve(__dirname, '../..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');
const compose = parse(read('docker-compose.yml')) as { services: Record<string, Record<string, unknown>> };
const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;

describe('docker-compose.yml', () => {
  it('runs PostgreSQL, Temporal, its UI, the worker and the gateway', () => {
    expect(Object.keys(compose.services).sort()).toEqual([
      'gateway',
      'postgresql',
      'temporal',
      'temporal-ui',
      'worker',
    ]);
  });

  it('starts the worker and gateway with the same entry points as npm run worker / gateway', () => {
    expect((compose.services.worker!.command as string[]).join(' ')).toBe(`npx ${scripts.worker}`);
    expect((compose.services.gateway!.command as string[]).join(' ')).toBe(`npx ${scripts.gateway}`);
  });

  it('points both at the Temporal service and exposes the gateway on all interfaces', () => {
    for (const name of ['worker', 'gateway']) {
      expect(compose.services[name]!.environment).toMatchObject({
        TEMPORAL_ADDRESS: 'temporal:7233',
        TEMPORAL_TASK_QUEUE: 'agent',
      });
      expect(compose.services[name]!.depends_on).toMatchObject({
        temporal: { condition: 'service_healthy' },
      });
    }
    expect(compose.services.gateway!.environment).toMatchObject({ HOST: '0.0.0.0', PORT: '3000' });
  });

  it('publishes only the gateway to the network: Temporal and its UI on 127.0.0.1, PostgreSQL not at all', () => {
    expect(compose.services.gateway!.ports).toEqual(['3000:3000']);
    for (const name of ['temporal', 'temporal-ui'])
      for (const port of compose.services[name]!.ports as string[])
        expect(port, name).toMatch(/^127\.0\.0\.1:/);
    expect(compose.services.postgresql!.ports).toBeUndefined();
  });

  it('shares one credential vault (and its key file) between the gateway, which stores, and the worker, which reads', () => {
    for (const name of ['worker', 'gateway']) {
      const service = compose.services[name]!;
      const vaultPath = (service.environment as Record<string, string>).VAULT_PATH!;
      const mount = (service.volumes as string[]).find((v) => v.startsWith('vault:'));
      expect(mount, name).toBeDefined();
      expect(vaultPath.startsWith(`${mount!.split(':')[1]}/`), name).toBe(true);
    }
    expect(Object.keys(parse(read('docker-compose.yml')).volumes)).toContain('vault');
  });
});

describe('Dockerfile', () => {
  const dockerfile = read('Dockerfile');
  it('uses Node 24, installs from the lockfile and prebuilds the workflow bundle it points workers at', () => {
    expect(dockerfile).toMatch(/^FROM node:24/m);
    expect(dockerfile).toContain('npm ci --omit=dev');
    expect(dockerfile).toContain('WORKFLOW_BUNDLE_PATH=/app/workflow-bundle.js');
    expect(dockerfile).toContain('scripts/bundle-workflows.ts /app/workflow-bundle.js');
  });

  it('copies every runtime folder', () => {
    for (const folder of ['common', 'workflows', 'activities', 'workers', 'gateways'])
      expect(dockerfile).toContain(`COPY ${folder} ./${folder}`);
  });
});
