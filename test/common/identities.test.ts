/** Who a signed-in or proxy-named person is: ids never collide, and one that would not fit is refused, not cut. */
import { describe, expect, it } from 'vitest';
import { proxyUserId, signInUserId } from '../../common/identities';

const users = { alice: { sub: ['alice-sub-1'], slack: ['U0ALICE01'], discord: [] } };

describe('identities', () => {
  it('maps a listed subject to its name and any other to provider:subject, spelled out reversibly', () => {
    expect(signInUserId('login', 'alice-sub-1', users)).toBe('alice');
    expect(signInUserId('login', 'bob|42', users)).toBe('login:bob~7c42');
  });

  it('refuses a subject too long for an id instead of cutting two people down to one', () => {
    const prefix = 'x'.repeat(200);
    const first = signInUserId('login', `${prefix}-first`, users);
    const second = signInUserId('login', `${prefix}-second`, users);
    expect([first, second]).toEqual([undefined, undefined]);
    // The longest that fits is taken whole.
    const fits = 'y'.repeat(128 - 'login:'.length);
    expect(signInUserId('login', fits, users)).toBe(`login:${fits}`);
    expect(signInUserId('login', `${fits}y`, users)).toBeUndefined();
  });

  it('keeps proxy names from passing for chat ids or the local user', () => {
    expect(proxyUserId('U0ALICE01', users)).toBe('web:U0ALICE01');
    expect(proxyUserId('local', users)).toBe('web:local');
    expect(proxyUserId('carol', users)).toBe('carol');
    expect(proxyUserId('a:b', users)).toBeUndefined();
  });
});
