/** Reading versions as visibility stores them, and the build id a bundle gets. */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildIdIn, buildIdOfBundle, versionKey } from '../../infra/temporal/deployment';
import { tempDir } from '../helpers/config';

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
});
