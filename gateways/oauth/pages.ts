/** The small pages a person sees during a sign-in: outcome pages and the API key form. Escaped, no scripts. */
const escape = (text: string) =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  );

function layout(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escape(title)}</title><style>
body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;color:#1f2328}
h1{font-size:1.4rem}.ok{color:#1a7f37}.bad{color:#cf222e}label{display:block;margin:1rem 0 .3rem}
input[type=password]{width:100%;padding:.5rem;font:inherit}button{margin-top:1rem;padding:.5rem 1rem;font:inherit}
</style></head><body>${body}</body></html>`;
}

export function outcomePage(kind: 'ok' | 'bad', title: string, detail: string): string {
  return layout(title, `<h1 class="${kind}">${escape(title)}</h1><p>${escape(detail)}</p>`);
}

/** Whose agent an account is connected to, said before anything is connected. */
export const connectingFor = (providerName: string, owner: string) =>
  `You are connecting your ${providerName} account to the agent conversations of @${owner}: its tools will act with it on @${owner}'s behalf.`;

/**
 * Asked before a chat link's sign-in when this browser cannot show who opens it (a link can be forwarded): it
 * names the person the account will serve, and only a deliberate click goes on.
 */
export function confirmConnectPage(options: {
  providerName: string;
  owner: string;
  action: string;
  ticket: string;
  /** The value of this page's Strict cookie: only a post from this very page carries both. */
  confirm: string;
  signInUrl: string | undefined;
}): string {
  const { providerName, owner } = options;
  return layout(
    `Connect ${providerName} for @${owner}?`,
    `<h1>Connect ${escape(providerName)} for @${escape(owner)}?</h1>
<p>${escape(connectingFor(providerName, owner))}</p>
<p><strong>Are you @${escape(owner)}?</strong> If someone sent you this link, close this page: nothing is connected unless you continue.</p>
${options.signInUrl ? `<p><a href="${escape(options.signInUrl)}">Sign in to the chat first</a> to have this checked for you.</p>` : ''}
<form method="post" action="${escape(options.action)}">
<input type="hidden" name="ticket" value="${escape(options.ticket)}">
<input type="hidden" name="confirm" value="${escape(options.confirm)}">
<button type="submit">I am @${escape(owner)}: connect my ${escape(providerName)} account</button></form>`,
  );
}

export function apiKeyForm(options: {
  providerName: string;
  owner: string;
  action: string;
  ticket: string;
  help: string | undefined;
}): string {
  return layout(
    `Connect ${options.providerName}`,
    `<h1>Connect ${escape(options.providerName)}</h1>
<p>${escape(connectingFor(options.providerName, options.owner))}</p>
<p>Paste your ${escape(options.providerName)} API key. It is stored encrypted and used only by your agent's tools; the agent itself never sees it.</p>
${options.help ? `<p>${escape(options.help)}</p>` : ''}
<form method="post" action="${escape(options.action)}">
<input type="hidden" name="ticket" value="${escape(options.ticket)}">
<label for="key">API key</label><input id="key" name="key" type="password" autocomplete="off" required maxlength="4000">
<button type="submit">Save</button></form>`,
  );
}
