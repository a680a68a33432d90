/**
 * The agent's Markdown, rendered safely: micromark (CommonMark) turns it into HTML with every raw HTML tag escaped
 * and dangerous link protocols (javascript:, data:) dropped, so nothing the model writes can run in the page.
 * Code blocks get a copy button.
 */
import { micromark } from 'micromark';
import { useState } from 'preact/hooks';

const FENCE = /```[^\n`]*\n?([\s\S]*?)```/g;

export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [done, setDone] = useState(false);
  return (
    <button
      type="button"
      class="copy"
      aria-label={`${label} to the clipboard`}
      onClick={async () => {
        await navigator.clipboard?.writeText(text).catch(() => {});
        setDone(true);
        setTimeout(() => setDone(false), 1_500);
      }}
    >
      {done ? 'Copied' : label}
    </button>
  );
}

function Prose({ text }: { text: string }) {
  if (!text.trim()) return null;
  // micromark escapes HTML unless told otherwise: this is the one place the page sets HTML.
  return <div class="prose" dangerouslySetInnerHTML={{ __html: micromark(text) }} />;
}

export function Markdown({ text }: { text: string }) {
  const parts = [];
  let last = 0;
  for (const match of text.matchAll(FENCE)) {
    parts.push(<Prose key={`p${last}`} text={text.slice(last, match.index)} />);
    const code = match[1] ?? '';
    parts.push(
      <div class="code" key={`c${match.index}`}>
        <CopyButton text={code} />
        <pre>{code}</pre>
      </div>,
    );
    last = match.index + match[0].length;
  }
  parts.push(<Prose key={`p${last}`} text={text.slice(last)} />);
  return <>{parts}</>;
}
