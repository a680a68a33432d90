/** Who may sign in: only the accounts the operator names (common/sign-in-rule.ts), and the config that says so. */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../infra/config';
import { admits, type SignInRule } from '../../common/sign-in-rule';
import { tempDir } from '../helpers/config';

const none: SignInRule = { any: false, users: [], domains: [], tenants: [], groups: [] };

describe('the sign-in rule', () => {
  it('admits a listed subject, users-table name or verified email, and nobody else', () => {
    const rule = { ...none, users: ['alice', '1093', 'Carol@Example.com'] };
    expect(admits(rule, { sub: '1093' }, 'corp:1093')).toBe(true);
    expect(admits(rule, { sub: 'x7' }, 'alice')).toBe(true);
    expect(admits(rule, { sub: 'c', email: 'carol@example.com', emailVerified: true }, 'corp:c')).toBe(true);
    // An unverified email is whatever the account typed: it counts for nothing.
    expect(admits(rule, { sub: 'm', email: 'carol@example.com', emailVerified: false }, 'corp:m')).toBe(
      false,
    );
    expect(admits(rule, { sub: 'eve' }, 'corp:eve')).toBe(false);
  });

  it('admits by verified email domain, Google’s hd, Entra’s tenant or a group', () => {
    const rule = { ...none, domains: ['example.com'], tenants: ['t-1'], groups: ['agents'] };
    expect(admits(rule, { sub: 'a', email: 'a@EXAMPLE.com', emailVerified: true }, 'x')).toBe(true);
    expect(admits(rule, { sub: 'b', email: 'b@example.com.evil', emailVerified: true }, 'x')).toBe(false);
    expect(admits(rule, { sub: 'b', email: 'b@example.com', emailVerified: false }, 'x')).toBe(false);
    expect(admits(rule, { sub: 'c', hd: 'example.com' }, 'x')).toBe(true);
    expect(admits(rule, { sub: 'd', tid: 't-1' }, 'x')).toBe(true);
    expect(admits(rule, { sub: 'e', tid: 't-2', groups: ['staff', 'agents'] }, 'x')).toBe(true);
    expect(admits(rule, { sub: 'f', tid: 't-2', groups: ['staff'] }, 'x')).toBe(false);
  });

  it('admits everyone only when told so explicitly', () => {
    expect(admits({ ...none, any: true }, { sub: 'anyone' }, 'corp:anyone')).toBe(true);
    expect(admits(none, { sub: 'anyone' }, 'corp:anyone')).toBe(false);
  });

  it('refuses to start sign-in mode that names nobody, and says how to name them', () => {
    const file = path.join(tempDir(), 'agent.config.json');
    writeFileSync(
      file,
      JSON.stringify({ providers: { corp: { type: 'oauth2', issuer: 'https://id.example' } } }),
    );
    const env = { AGENT_CONFIG: file, WEB_LOGIN: 'corp', OAUTH_CORP_CLIENT_ID: 'web' };
    expect(() => loadConfig(env)).toThrow(/WEB_ALLOWED_USERS.*WEB_ALLOW_ANY_ACCOUNT=true/s);
    expect(loadConfig({ ...env, WEB_ALLOWED_DOMAINS: '@Example.com' }).web.admit.domains).toEqual([
      'example.com',
    ]);
    expect(loadConfig({ ...env, WEB_ALLOW_ANY_ACCOUNT: 'true' }).web.admit.any).toBe(true);
  });
});
