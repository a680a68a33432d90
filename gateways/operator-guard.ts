/**
 * Who may use an operator's door on the gateway (the codec endpoint, the audit export): `Authorization: Bearer
 * <token>` (compared in constant time) when its token is set, or an operator signed in to the web chat (sign-in or
 * proxy mode): the people TEMPORAL_UI_USERS names, the same who may open the Temporal UI. Anyone else signed in is
 * refused. In local mode, a door that asks for it takes the per-install sign-in (the chat's link or cookie); any
 * other is open only on a loopback gateway with no token.
 */
import type { Context } from 'hono';
import { sameSecret } from '../infra/same-secret';
import type { GatewayDeps } from './platform';
import { isLoopbackHost } from './web/auth/addresses';

export interface OperatorDoor {
  /** "the codec endpoint" */
  name: string;
  /** Why it is for operators only: "shows every conversation in clear text". */
  why: string;
  token: string | undefined;
  /** The token's setting, named in refusals: "CODEC_AUTH_TOKEN". */
  tokenSetting: string;
  /** Local mode: ask for the per-install sign-in even on loopback (else loopback with no token is open). */
  signInEvenLocally?: boolean;
}

export type OperatorRefusal = { status: 401 | 403; error: string } | undefined;

export function operatorGuard(deps: GatewayDeps, door: OperatorDoor): (c: Context) => OperatorRefusal {
  const onLoopback = isLoopbackHost(deps.config.host);
  return (c) => {
    const bearer = /^Bearer\s+(.+)$/i.exec(c.req.header('authorization') ?? '')?.[1]?.trim();
    if (door.token && bearer !== undefined && sameSecret(bearer, door.token)) return undefined;
    if (deps.webAuth.mode !== 'local') {
      const who = deps.webAuth.identify(c);
      if (who.ok && deps.config.temporal.uiUsers.includes(who.caller.userId)) return undefined;
      if (who.ok)
        return {
          status: 403,
          error: `${door.name} ${door.why}: only the operators TEMPORAL_UI_USERS names may use it, and @${who.caller.userId} is not one of them`,
        };
    } else if (door.signInEvenLocally) {
      if (deps.webAuth.identify(c).ok) return undefined;
    } else if (!door.token && onLoopback) return undefined;
    if (door.signInEvenLocally && deps.webAuth.mode === 'local')
      return {
        status: 401,
        error: `${door.name} needs the chat's sign-in (the link the gateway printed at start) or Authorization: Bearer <${door.tokenSetting}>`,
      };
    return {
      status: 401,
      error: door.token
        ? `${door.name} needs Authorization: Bearer <${door.tokenSetting}>`
        : `${door.name} needs a sign-in as an operator (TEMPORAL_UI_USERS) or ${door.tokenSetting} when the gateway is not on loopback`,
    };
  };
}
