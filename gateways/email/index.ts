/**
 * The confirm page of an e-mailed gate (activities/gate-mail.ts). `GET /email/gate?t=…` only shows: mail scanners
 * and link previews open every link, and nothing they do decides anything. The page shows the request, as the
 * person the mail was sent to must be signed in to see it, and a form; only a `POST` from that form decides:
 * same origin (a browser always says where a form comes from), the link's person signed in, the link unexpired and
 * used once (its nonce is spent in the vault). The workflow then checks the decision as any click.
 */
import type { Context, Hono } from 'hono';
import { z } from 'zod';
import { aliasesOf } from '../../common/identities';
import { escapeHtml } from '../../common/html';
import { alreadyDecided, promptHeadline } from '../../common/gates/words';
import { verifyGateLink, type GateLink } from '../../infra/credentials/signed';
import { GATE_MEMO_KEY, type MemoGate } from '../../workflows/session/gate-memo';
import type { Gate } from '../../workflows/session/contract';
import { approvalChoices, gateInterrupt } from '../agui/interrupts';
import { connectUrl } from '../oauth/links';
import type { GatewayDeps } from '../platform';
import { Sessions, WEB_DEADLINE_MS } from '../sessions';
import { ClickVerdict } from '../click-verdict';
import { refuseForeignHost } from '../web/auth/request-guard';

const PAGE_HEADERS = {
  'content-security-policy':
    "default-src 'none'; style-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  'x-frame-options': 'DENY',
  // The link's token is in this page's address: it never leaves in a Referer.
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-store',
};
const MAX_FORM_BYTES = 8_000;
const OUTCOME_WAIT_MS = 8_000;

function page(
  c: Context,
  status: 200 | 202 | 400 | 401 | 403 | 404 | 409 | 410 | 413 | 415 | 503,
  title: string,
  body: string,
) {
  return c.html(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="robots" content="noindex"><title>${escapeHtml(title)}</title></head><body><main><h1>${escapeHtml(title)}</h1>${body}</main></body></html>`,
    status,
    PAGE_HEADERS,
  );
}
const para = (text: string) =>
  text
    .split('\n')
    .filter(Boolean)
    .map((line) => `<p>${escapeHtml(line)}</p>`)
    .join('');

const formSchema = z.object({
  t: z.string().min(1).max(2_000),
  choice: z.enum(['approve', 'deny', 'always', 'edit', 'answer']),
  reason: z.string().max(2_000).optional(),
  args: z.string().max(20_000).optional(),
});

export function mountEmail(app: Hono, deps: GatewayDeps): void {
  if (!deps.config.web.enabled) return;
  const auth = deps.webAuth;
  const sessions = new Sessions(deps.client, deps.config.temporal.taskQueue, 'web', WEB_DEADLINE_MS, 'email');
  const key = () => deps.credentials().keys.signing;
  const linkIsFor = (caller: string, link: GateLink) =>
    caller === link.userId || aliasesOf(caller, deps.config.policy.users).includes(link.userId);

  /** The gate as its conversation's memo shows it while open (the server answers with no worker running). */
  const openGate = async (link: GateLink): Promise<Gate | undefined> => {
    const memo = await sessions.memo(link.workflowId).catch(() => undefined);
    const entry = (memo?.[GATE_MEMO_KEY] as Record<string, MemoGate> | undefined)?.[link.gateId];
    return entry?.status === 'pending' ? (entry as Gate) : undefined;
  };

  /** The link and the person: a refusal page, or who they are. */
  const admit = (c: Context, token: string) => {
    const host = refuseForeignHost(c, auth);
    if (host) return { refusal: page(c, 403, 'Wrong address', para(host.error)) };
    const link = verifyGateLink(key(), token);
    if (!link.ok)
      return {
        refusal:
          link.reason === 'expired'
            ? page(
                c,
                410,
                'This link has expired',
                para('Open the conversation, or "Needs you" in the web app, to decide.'),
              )
            : page(c, 400, 'This link is not valid', para('Use the link from the e-mail as it was sent.')),
      };
    const who = auth.identify(c);
    if (!who.ok)
      return {
        refusal: page(
          c,
          401,
          'Sign in first',
          `${para(who.error)}${auth.mode === 'login' ? '<p><a href="/auth/login">Sign in</a>, then open the link from the e-mail again.</p>' : ''}`,
        ),
      };
    if (!linkIsFor(who.caller.userId, link.value))
      return {
        refusal: page(
          c,
          403,
          'This link was sent to someone else',
          para(
            `You are signed in as @${who.caller.userId}; this decision was sent to @${link.value.userId}.`,
          ),
        ),
      };
    return { link: link.value, userId: who.caller.userId };
  };

  app.get('/email/gate', async (c) => {
    const admitted = admit(c, c.req.query('t') ?? '');
    if ('refusal' in admitted) return admitted.refusal;
    const { link, userId } = admitted;
    const gate = await openGate(link);
    if (!gate)
      return page(
        c,
        200,
        'Nothing waits here any more',
        para('It was decided, or its conversation ended. The conversation shows what happened.'),
      );
    const words =
      gateInterrupt(gate, userId, (provider, expiresAt) =>
        connectUrl(deps.credentials(), deps.config.publicUrl, userId, provider, {
          channel: 'web',
          expiresAt,
        }),
      ).message ?? promptHeadline(gate);
    if (gate.kind === 'credential') {
      const url = connectUrl(deps.credentials(), deps.config.publicUrl, userId, gate.provider, {
        channel: 'web',
        ...(gate.expiresAt ? { expiresAt: gate.expiresAt } : {}),
      });
      return page(
        c,
        200,
        promptHeadline(gate),
        `${para(words)}<p><a href="${escapeHtml(url)}">Connect ${escapeHtml(gate.providerName)}</a></p>`,
      );
    }
    const hidden = `<input type="hidden" name="t" value="${escapeHtml(c.req.query('t') ?? '')}">`;
    if (gate.kind === 'question') {
      const fields = gate.questions
        .map((q, index) => {
          const options = q.options
            .map(
              (o) =>
                `<label><input type="${q.multi_select ? 'checkbox' : 'radio'}" name="q${index}" value="${escapeHtml(o.label)}"> ${escapeHtml(o.label)}</label><br>`,
            )
            .join('');
          const other =
            q.allow_custom || !q.options.length
              ? `<label>${q.options.length ? 'Other' : 'Your answer'}<br><input type="text" name="q${index}.other" maxlength="2000" size="60"></label>`
              : '';
          return `<fieldset><legend>${escapeHtml(q.label)}: ${escapeHtml(q.prompt)}</legend>${options}${other}</fieldset>`;
        })
        .join('');
      return page(
        c,
        200,
        promptHeadline(gate),
        `${para(words)}<form method="post" action="/email/gate">${hidden}${fields}<p><button type="submit" name="choice" value="answer">Submit</button></p></form>`,
      );
    }
    if (gate.kind !== 'approval')
      return page(c, 200, promptHeadline(gate), `${para(words)}<p>Answer it in the conversation.</p>`);
    const offered = approvalChoices(gate, userId);
    const button = (choice: string, label: string) =>
      `<button type="submit" name="choice" value="${choice}">${escapeHtml(label)}</button>`;
    const edit =
      offered.includes('edit') && gate.args !== undefined
        ? `<p><label>Edit the arguments (JSON), then choose Edit &amp; approve<br><textarea name="args" maxlength="20000" rows="8" cols="60">${escapeHtml(JSON.stringify(gate.args, null, 2))}</textarea></label></p>`
        : '';
    return page(
      c,
      200,
      promptHeadline(gate),
      `${para(words)}<form method="post" action="/email/gate">${hidden}<p><label>Reason (told to the agent if you deny)<br><textarea name="reason" maxlength="2000" rows="3" cols="60"></textarea></label></p>${edit}<p>${offered.includes('approve') ? button('approve', 'Approve') : ''} ${button('deny', 'Deny')} ${offered.includes('always') ? button('always', 'Always allow here') : ''} ${edit ? button('edit', 'Edit & approve') : ''}</p></form>`,
    );
  });

  app.post('/email/gate', async (c) => {
    // A form from this page only: a browser always names where a POST comes from.
    const origin = c.req.header('origin')?.toLowerCase();
    if (!origin || !auth.served.origins.has(origin))
      return page(c, 403, 'Refused', para('Decide from the page the e-mail links to.'));
    const type = (c.req.header('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    if (type !== 'application/x-www-form-urlencoded')
      return page(c, 415, 'Refused', para('Decide from the page the e-mail links to.'));
    const raw = await c.req.text();
    if (raw.length > MAX_FORM_BYTES) return page(c, 413, 'Refused', para('The form is too large.'));
    const fields = new URLSearchParams(raw);
    const form = formSchema.safeParse(Object.fromEntries(fields));
    if (!form.success) return page(c, 400, 'Refused', para('Choose Approve or Deny on the page.'));
    const admitted = admit(c, form.data.t);
    if ('refusal' in admitted) return admitted.refusal;
    const { link, userId } = admitted;
    const gate = await openGate(link);
    if (!gate || (gate.kind !== 'approval' && gate.kind !== 'question')) {
      const now = await sessions
        .clickOutcome(link.workflowId, { gateId: link.gateId, userId, since: 0 }, 3_000)
        .catch(() => undefined);
      return page(
        c,
        409,
        'Nothing waits here any more',
        para(now?.gate ? alreadyDecided(now.gate) : 'It was decided, or its conversation ended.'),
      );
    }
    const choice = form.data.choice;
    if (
      gate.kind === 'question'
        ? choice !== 'answer'
        : choice === 'answer' || !approvalChoices(gate, userId).includes(choice)
    )
      return page(c, 403, 'Refused', para(`You may not ${choice} this request.`));
    let args: Record<string, unknown> | undefined;
    if (choice === 'edit') {
      try {
        const parsed: unknown = JSON.parse(form.data.args ?? '');
        if (parsed && typeof parsed === 'object' && !Array.isArray(parsed))
          args = parsed as Record<string, unknown>;
      } catch {
        args = undefined;
      }
      if (!args)
        return page(
          c,
          400,
          'Not taken',
          para('The arguments are not a JSON object: go back and correct them.'),
        );
    }
    // Once: a second POST of the same link (a reload, a replay) decides nothing.
    if (!(await deps.credentials().vault.consumeTicket(link.nonce, link.expiresAt)))
      return page(c, 409, 'This link was already used', para('The conversation shows what was decided.'));
    const verdict = await ClickVerdict.before(sessions, link.workflowId, { gateId: link.gateId, userId });
    try {
      if (gate.kind === 'question')
        await sessions.answer(link.workflowId, {
          gateId: link.gateId,
          userId,
          answers: gate.questions.map((q, index) => {
            const other = (fields.get(`q${index}.other`) ?? '').trim().slice(0, 2_000);
            return {
              question: q.label,
              selected: fields
                .getAll(`q${index}`)
                .filter((label) => q.options.some((o) => o.label === label)),
              ...(other ? { custom: other } : {}),
            };
          }),
        });
      else
        await sessions.decide(link.workflowId, {
          gateId: link.gateId,
          choice: choice as 'approve' | 'deny' | 'always' | 'edit',
          userId,
          ...(choice === 'always' ? { scope: 'session' as const } : {}),
          ...(args ? { args } : {}),
          ...(choice === 'deny' && form.data.reason?.trim() ? { reason: form.data.reason.trim() } : {}),
        });
    } catch (error) {
      deps.log.warn('email decision not sent', {
        workflowId: link.workflowId,
        error: (error as Error).message,
      });
      return page(
        c,
        503,
        'Not sent',
        para("The agent's server did not answer. Open the conversation to decide."),
      );
    }
    deps.log.info('email decision sent', { workflowId: link.workflowId, gateId: link.gateId, userId });
    // The workflow's verdict, when a worker answers soon; the decision stands either way.
    const deadline = Date.now() + OUTCOME_WAIT_MS;
    while (Date.now() < deadline) {
      const outcome = await sessions
        .clickOutcome(link.workflowId, { gateId: link.gateId, userId, since: verdict.from }, 3_000)
        .catch(() => undefined);
      const told = verdict.told(outcome);
      if (told) return page(c, 409, 'Not taken', para(told.text));
      const decided = outcome?.gate;
      if (decided && decided.status !== 'pending')
        return page(
          c,
          200,
          decided.resolution?.by === userId ? 'Done' : 'Nothing waits here any more',
          para(alreadyDecided(decided).replace('was already ', 'was ')),
        );
      if (verdict.counted(outcome))
        return page(c, 200, 'Your approval counts', para(`It still waits for more approvals.`));
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    return page(c, 202, 'Sent', para('Your decision was sent; the conversation shows its outcome.'));
  });
}
