/** What `npm start` says a shell command meets: nothing when sandboxed, the fix per system when refused. */
import { describe, expect, it } from 'vitest';
import { shellLine } from '../../scripts/start-header';

describe("npm start's header", () => {
  it('says when shell commands are refused, with the fix for that system, and stays quiet when sandboxed', () => {
    expect(shellLine({ kind: 'bwrap' })).toEqual([]);
    const linux = shellLine({ kind: 'unavailable', reason: 'bubblewrap (bwrap) is not installed' }, 'linux');
    expect(linux.join('\n')).toContain('commands are refused here: bubblewrap (bwrap) is not installed.');
    expect(linux.join('\n')).toContain('apt-get install bubblewrap');
    const mac = shellLine({ kind: 'unavailable', reason: 'bubblewrap (bwrap) is not installed' }, 'darwin');
    expect(mac.join('\n')).toContain('The sandbox needs Linux: run the Docker image');
    expect(shellLine({ kind: 'off' })[0]).toContain('unsandboxed');
  });
});
