/** Polls until a probe returns something (not undefined/false); on timeout, says what and the context. */
export async function until<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  options: { timeoutMs?: number; context?: () => string; ignoreErrors?: boolean } = {},
): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  while (Date.now() < deadline) {
    const value = options.ignoreErrors
      ? await Promise.resolve()
          .then(probe)
          .catch(() => undefined)
      : await probe();
    if (value !== undefined && value !== false) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`timed out waiting for ${what}${options.context ? `; ${options.context()}` : ''}`);
}
