/**
 * Shell-style patterns for allow and deny lists, argument rules and grants: `*` matches any run of characters,
 * `?` one character, `\*`, `\?` and `\\` the character itself, everything else is literal. `git status*`
 * matches "git status" and "git status -s", not "git push". Pure (no Node built-ins): workflows may import it.
 *
 * Matching is the greedy-star two-pointer walk, not a regular expression: only the most recent `*` is ever
 * revisited (an earlier one could only stretch into text the later one already covers), so the work is at most
 * (pattern length + 1) × (subject length + 1) steps whatever the input, where a backtracking regex takes
 * seconds on `*a*a*a*a*a*b` against 200 characters. Characters are code points, so `?` matches one emoji.
 */
export function globMatches(pattern: string, subject: string): boolean {
  return matchGlob(pattern, subject).matched;
}

type Token = '*' | '?' | { literal: string };

/** The pattern as tokens: `\*`, `\?` and `\\` stand for the character itself (exactPattern writes them). */
function tokens(pattern: string): Token[] {
  const chars = Array.from(pattern);
  const out: Token[] = [];
  for (let i = 0; i < chars.length; i++) {
    const char = chars[i]!;
    const next = chars[i + 1];
    if (char === '\\' && (next === '*' || next === '?' || next === '\\')) {
      out.push({ literal: next });
      i++;
    } else out.push(char === '*' || char === '?' ? char : { literal: char });
  }
  return out;
}

/** A pattern that matches exactly `subject` and nothing else: what a person saw on an "Always allow" button. */
export function exactPattern(subject: string): string {
  return subject.replace(/[\\*?]/g, '\\$&');
}

/** The matcher with its work counted; `steps` never exceeds (pattern length + 1) × (subject length + 1). */
export function matchGlob(pattern: string, subject: string): { matched: boolean; steps: number } {
  const p = tokens(pattern);
  const s = Array.from(subject);
  let pi = 0;
  let si = 0;
  // Where the last `*` was in the pattern, and where in the subject its current stretch ends.
  let star = -1;
  let starEnd = 0;
  let steps = 0;
  while (si < s.length) {
    steps++;
    const token = p[pi];
    if (token === '*') {
      star = pi++;
      starEnd = si;
    } else if (token !== undefined && (token === '?' || token.literal === s[si])) {
      pi++;
      si++;
    } else if (star >= 0) {
      pi = star + 1;
      si = ++starEnd;
    } else {
      return { matched: false, steps };
    }
  }
  while (p[pi] === '*') {
    steps++;
    pi++;
  }
  return { matched: pi === p.length, steps };
}
