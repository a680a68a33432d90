/**
 * The page's one way to the gateway: JSON over `/api`, with errors in the person's words. The browser's session
 * cookie (HttpOnly, SameSite=Strict) says who calls; the page never names a user.
 */

export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly signIn?: string,
  ) {
    super(message);
  }
}

/** What the gateway's words mean to a person, where they are developer words. */
function plainWords(status: number, error: string | undefined): string {
  if (status === 413) return 'That is too long to send (a message may have up to 20,000 characters).';
  if (status === 429) return error ? `Slow down: ${error}.` : 'Slow down a little, then try again.';
  if (status >= 500 && !error) return 'The agent had a problem with that. Try again in a moment.';
  return error ?? `Something went wrong (HTTP ${status}).`;
}

export async function api<T>(path: string, options: RequestInit = {}): Promise<T> {
  let response: Response;
  try {
    response = await fetch(`/api${path}`, {
      ...options,
      headers: { 'content-type': 'application/json', ...(options.headers ?? {}) },
    });
  } catch {
    throw new ApiError(
      "The agent's web server cannot be reached (is your connection down?). Nothing was sent.",
      0,
    );
  }
  const body = (await response.json().catch(() => ({}))) as { error?: string; signIn?: string };
  if (!response.ok) throw new ApiError(plainWords(response.status, body.error), response.status, body.signIn);
  return body as T;
}

export const post = <T>(path: string, body: unknown) =>
  api<T>(path, { method: 'POST', body: JSON.stringify(body) });

export const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));
