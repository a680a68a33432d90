/**
 * Security: allow/deny patterns and grants are matched in linear time. Patterns built to make a backtracking
 * matcher explode (`*a*a*…*b`, hundreds of stars, runs of `?`) against 10,000-character subjects, and random
 * ones, are checked against two independent reference matchers for the answer and against the matcher's own
 * step count for the work. Steps, not milliseconds: the bound (pattern length + 1) × (subject length + 1) holds
 * on any machine under any load, where a timing threshold would measure the machine. "lost" counts a wrong
 * answer (a deny that would not deny, an allow that would allow too much).
 */
import { describe, it } from 'vitest';
import { matchGlob } from '../../common/glob';
import { Tally } from '../chaos/summary';

/**
 * The pattern's characters with the escapes read (`\\*`, `\\?`, `\\\\` are the character itself): wildcards
 * as `*` and `?`, literals as one-character arrays, so a literal star cannot be taken for a wildcard.
 */
function readPattern(pattern: string): (string | [string])[] {
  const out: (string | [string])[] = [];
  const chars = Array.from(pattern);
  for (let i = 0; i < chars.length; i++) {
    if (chars[i] === '\\' && ['*', '?', '\\'].includes(chars[i + 1] ?? '')) out.push([chars[++i]!]);
    else out.push(chars[i] === '*' || chars[i] === '?' ? chars[i]! : [chars[i]!]);
  }
  return out;
}

/** The previous matcher: a regular expression, fine for small inputs only. */
function regexReference(pattern: string, subject: string): boolean {
  const source = readPattern(pattern)
    .map((token) =>
      token === '*' ? '.*' : token === '?' ? '.' : token[0]!.replace(/[\\^$+.()|[\]{}*?]/g, '\\$&'),
    )
    .join('');
  return new RegExp(`^${source}$`, 'su').test(subject);
}

/** Dynamic programming over (pattern prefix, subject prefix): slow but obviously right, for any size. */
function tableReference(pattern: string, subject: string): boolean {
  const p = readPattern(pattern);
  const s = Array.from(subject);
  let row = new Array<boolean>(s.length + 1).fill(false);
  row[0] = true;
  for (const char of p) {
    const next = new Array<boolean>(s.length + 1).fill(false);
    if (char === '*') {
      next[0] = row[0]!;
      for (let j = 1; j <= s.length; j++) next[j] = row[j]! || next[j - 1]!;
    } else {
      for (let j = 1; j <= s.length; j++)
        next[j] = row[j - 1]! && (char === '?' || (typeof char !== 'string' && char[0] === s[j - 1]));
    }
    row = next;
  }
  return row[s.length]!;
}

/** A small deterministic generator, so a failure names a case that can be replayed. */
function random(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    return state / 2 ** 32;
  };
  return {
    int: (below: number) => Math.floor(next() * below),
    text: (length: number, alphabet: string) =>
      Array.from({ length }, () => alphabet[Math.floor(next() * alphabet.length)]).join(''),
  };
}

function checkOne(tally: Tally, pattern: string, subject: string, expected: boolean): void {
  const { matched, steps } = matchGlob(pattern, subject);
  const bound = (Array.from(pattern).length + 1) * (Array.from(subject).length + 1);
  const name = () =>
    `pattern ${JSON.stringify(pattern.slice(0, 40))}… (${pattern.length}) on ${subject.length} chars`;
  tally.check(steps <= bound, () => `${name()}: ${steps} steps, more than ${bound}`);
  tally.check(matched === expected, () => `${name()}: matched ${matched}, expected ${expected}`);
  if (matched !== expected) tally.lost++;
}

describe('pattern matching', () => {
  it('agrees with a regular expression and a table on small random patterns', () => {
    const tally = new Tally();
    const rng = random(16);
    for (let run = 0; run < 20_000; run++) {
      const pattern = rng.text(rng.int(9), 'ab*?');
      const subject = rng.text(rng.int(11), 'ab');
      const expected = regexReference(pattern, subject);
      tally.check(tableReference(pattern, subject) === expected, () => `references disagree on ${pattern}`);
      checkOne(tally, pattern, subject, expected);
    }
    // Literal characters that mean something to a regular expression, and characters outside the basic plane.
    for (const [pattern, subject] of [
      ['a.b', 'axb'],
      ['(a|b)*', '(a|b)c'],
      ['[ab]', 'a'],
      ['^$', '^$'],
      ['\\*', '\\x'],
      ['say ?', 'say 🙂'],
      ['?', '🙂'],
      ['*\n*', 'a\nb'],
    ] as const)
      checkOne(tally, pattern, subject, regexReference(pattern, subject));
    tally.finish('patterns: matches like the reference');
  });

  it('stays within its step bound on pathological patterns and 10,000-character subjects', () => {
    const tally = new Tally();
    const starsA = (count: number) => `${'*a'.repeat(count)}*b`;
    const as = 'a'.repeat(10_000);
    const cases: [string, string][] = [
      // The grant that froze the worker: 21 s against 200 characters with a regular expression.
      ['*a*a*a*a*a*b', 'a'.repeat(200)],
      [starsA(249), as],
      [starsA(249), `${as.slice(1)}b`],
      ['*'.repeat(500), as],
      [`${'*'.repeat(499)}b`, as],
      ['?'.repeat(500), as],
      [`${'?'.repeat(499)}*`, as],
      [`${'*?'.repeat(250)}`, as],
      [`${'*?'.repeat(249)}b`, as],
      [`*${'a'.repeat(498)}b`, as],
      [`*${'a'.repeat(498)}*`, as],
      [`${'a*'.repeat(250)}`, as],
      [`${'a?*'.repeat(166)}c`, 'ab'.repeat(5_000)],
      ['*ab*ab*ab*ab*ab*ab*ab*ab*ab*ab*c', 'ab'.repeat(5_000)],
      ['rm *', `rm ${'-rf '.repeat(2_499)}x`],
    ];
    const rng = random(500);
    for (let run = 0; run < 20; run++) {
      const pattern = rng.text(1 + rng.int(500), 'ab**??');
      cases.push([pattern, rng.text(10_000, run % 2 ? 'a' : 'ab')]);
    }
    for (const [pattern, subject] of cases)
      checkOne(tally, pattern, subject, tableReference(pattern, subject));
    tally.finish('patterns: pathological inputs');
  });
});
