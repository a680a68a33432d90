/** Tool output is capped so transcripts and workflow payloads stay bounded; the cut is always announced. */
export const OUTPUT_CAP = 12_000;

export function capOutput(text: string, cap = OUTPUT_CAP): string {
  if (text.length <= cap) return text;
  return `${text.slice(0, cap)}\n…[output truncated: ${text.length - cap}+ more characters]`;
}
