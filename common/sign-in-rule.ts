/**
 * Who may sign in to the web chat in sign-in mode (`WEB_LOGIN`): only the accounts the operator names. An OpenID
 * provider such as Google or Entra ID authenticates anyone with an account there; being authenticated is not being
 * let in. Emails and domains count only when the provider says the email is verified.
 */
export interface SignInRule {
  /** WEB_ALLOW_ANY_ACCOUNT=true: everyone the provider signs in (a deliberate choice, never the default). */
  any: boolean;
  /** Subjects, verified emails or `users`-table names (WEB_ALLOWED_USERS). */
  users: string[];
  /** Verified email domains, and Google Workspace's `hd` claim (WEB_ALLOWED_DOMAINS). */
  domains: string[];
  /** Entra ID tenant ids, the `tid` claim (WEB_ALLOWED_TENANTS). */
  tenants: string[];
  /** Any of these in the `groups` claim (WEB_ALLOWED_GROUPS). */
  groups: string[];
}

/** What the provider said about the account, as the ID token's claims. */
export interface SignInClaims {
  sub: string;
  email?: string | undefined;
  emailVerified?: boolean | undefined;
  hd?: string | undefined;
  tid?: string | undefined;
  groups?: string[] | undefined;
}

export const admitsAnyone = (rule: SignInRule): boolean => rule.any;

export const namesSomeone = (rule: SignInRule): boolean =>
  rule.users.length + rule.domains.length + rule.tenants.length + rule.groups.length > 0;

/** Whether this account may sign in; `userId` is who it is here (its `users` name, or `<provider>:<sub>`). */
export function admits(rule: SignInRule, claims: SignInClaims, userId: string): boolean {
  if (rule.any) return true;
  const email = claims.emailVerified === true ? claims.email?.toLowerCase() : undefined;
  const users = new Set(rule.users.map((user) => user.toLowerCase()));
  if (rule.users.includes(claims.sub) || rule.users.includes(userId)) return true;
  if (email && users.has(email)) return true;
  const domain = email?.split('@').at(-1);
  if (domain && rule.domains.includes(domain)) return true;
  if (claims.hd && rule.domains.includes(claims.hd.toLowerCase())) return true;
  if (claims.tid && rule.tenants.includes(claims.tid)) return true;
  return (claims.groups ?? []).some((group) => rule.groups.includes(group));
}
