/** Reading versions as visibility stores them, and the build id a bundle gets. */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildIdIn, buildIdOfBundle, versionKey } from '../../infra/temporal/deployment';
import { bundleWorkflows, workflowCodeDigest } from '../../workers/workflow-code';
import { tempDir } from '../helpers/config';
import { readableCheckout } from '../helpers/readable-checkout';

describe('deployment versions', () => {
  it('reads the build id from either form visibility stores, and leaves another deployment’s whole', () => {
    expect(buildIdIn('agent:3f2a', 'agent')).toBe('3f2a');
    expect(buildIdIn('agent.3f2a', 'agent')).toBe('3f2a');
    expect(buildIdIn('agent:v0.1-9c', 'agent')).toBe('v0.1-9c');
    expect(buildIdIn('other:3f2a', 'agent')).toBe('other:3f2a');
    expect(versionKey({ deploymentName: 'agent', buildId: '3f2a' })).toBe('agent:3f2a');
  });

  it('gives the same bundle the same build id anywhere, and any change another', () => {
    const dir = tempDir('bundles-');
    const [a, b, c] = ['a.js', 'b.js', 'c.js'].map((name) => path.join(dir, name));
    writeFileSync(a!, 'workflow code');
    writeFileSync(b!, 'workflow code');
    writeFileSync(c!, 'workflow code!');
    expect(buildIdOfBundle(a!)).toBe(buildIdOfBundle(b!));
    expect(buildIdOfBundle(a!)).not.toBe(buildIdOfBundle(c!));
    expect(buildIdOfBundle(a!)).toMatch(/^[0-9a-f]{16}$/);
  });

  it('gives one commit checked out at two paths one build id, though webpack names the paths in the bundle', async () => {
    const dir = tempDir('bundles-');
    const here = path.join(dir, 'here.js');
    const there = path.join(dir, 'there.js');
    writeFileSync(here, await bundleWorkflows(path.resolve(__dirname, '../../workflows')));
    writeFileSync(there, await bundleWorkflows(path.join(readableCheckout(), 'workflows')));
    expect(readFileSync(here, 'utf8')).not.toBe(readFileSync(there, 'utf8'));
    expect(buildIdOfBundle(here)).toBe(buildIdOfBundle(there));
    expect(buildIdOfBundle(here)).toMatch(/^[0-9a-f]{16}$/);
  }, 120_000);

  it('gives workflow code with any file changed, added or moved another digest', () => {
    const root = tempDir('code-');
    const file = (name: string, text: string) => {
      mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
      writeFileSync(path.join(root, name), text);
    };
    file('workflows/index.ts', 'export {};');
    file('common/ids.ts', 'export const a = 1;');
    const digest = () => workflowCodeDigest(path.join(root, 'workflows'));
    const first = digest();
    expect(digest()).toBe(first);
    file('common/ids.ts', 'export const a = 2;');
    const changed = digest();
    expect(changed).not.toBe(first);
    file('common/more.ts', '');
    expect(digest()).not.toBe(changed);
  });
});
