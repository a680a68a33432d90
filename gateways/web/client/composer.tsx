/**
 * Where a person writes. Errors are said here, next to the text, in plain words; a message that could not be sent
 * stays in the box with its id, so sending it again after a late arrival is the same message, taken once.
 */
import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import { messageOf } from './api';

/** The gateway's limit on one message (message-route.ts). */
export const MAX_MESSAGE_CHARS = 20_000;
/** The box grows with what is written (a long paste shows), up to this share of the window; then it scrolls. */
const MAX_HEIGHT_SHARE = 0.4;

export function Composer({
  send,
  placeholder,
  initial = '',
}: {
  /** Resolves once the message is recorded; throws with the reason in the person's words. */
  send: (text: string, messageId: string) => Promise<void>;
  placeholder: string;
  initial?: string;
}) {
  const [text, setText] = useState(initial);
  const [error, setError] = useState<string | null>(null);
  const [sending, setSending] = useState(false);
  const unsent = useRef<{ text: string; messageId: string } | null>(null);
  const box = useRef<HTMLTextAreaElement>(null);
  // Fits the box to its text: taller as lines are written or pasted, back to two lines once sent.
  useLayoutEffect(() => {
    const el = box.current;
    if (!el) return;
    el.style.height = 'auto';
    el.style.height = `${Math.min(el.scrollHeight + 2, Math.round(window.innerHeight * MAX_HEIGHT_SHARE))}px`;
  }, [text]);
  const length = text.trim().length;
  const tooLong = length > MAX_MESSAGE_CHARS;

  const submit = async (event?: Event) => {
    event?.preventDefault();
    const message = text.trim();
    if (!message || sending) return;
    if (message.length > MAX_MESSAGE_CHARS)
      return setError(
        `This message has ${message.length.toLocaleString('en-US')} characters; the limit is ${MAX_MESSAGE_CHARS.toLocaleString('en-US')}. Shorten it, or split it in two.`,
      );
    const messageId = unsent.current?.text === message ? unsent.current.messageId : crypto.randomUUID();
    unsent.current = { text: message, messageId };
    setSending(true);
    try {
      await send(message, messageId);
      unsent.current = null;
      setText('');
      setError(null);
    } catch (failure) {
      setError(messageOf(failure));
    } finally {
      setSending(false);
    }
  };

  return (
    <form id="composer" onSubmit={submit} aria-label="Message the agent">
      <div class="composer-row">
        <textarea
          ref={box}
          id="text"
          data-testid="message-input"
          rows={2}
          aria-label="Your message"
          aria-invalid={tooLong || undefined}
          aria-describedby="composer-error"
          placeholder={placeholder}
          value={text}
          onInput={(e) => {
            setText(e.currentTarget.value);
            if (error) setError(null);
          }}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && !e.shiftKey) {
              e.preventDefault();
              void submit();
            }
          }}
        />
        <button type="submit" data-testid="send" disabled={sending}>
          Send
        </button>
      </div>
      <div id="composer-error" class="composer-error" role="alert" data-testid="composer-error">
        {error ??
          (length > MAX_MESSAGE_CHARS * 0.9
            ? `${length.toLocaleString('en-US')} of ${MAX_MESSAGE_CHARS.toLocaleString('en-US')} characters`
            : '')}
      </div>
    </form>
  );
}
