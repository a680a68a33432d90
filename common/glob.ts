/**
 * Shell-style patterns for allow lists and grants: `*` matches any run of characters, `?` one character,
 * everything else is literal. `git status*` matches "git status" and "git status -s", not "git push".
 */
export function globMatches(pattern: string, subject: string): boolean {
  const source = pattern
    .split('')
    .map((char) => (char === '*' ? '.*' : char === '?' ? '.' : char.replace(/[\\^$+.()|[\]{}]/g, '\\$&')))
    .join('');
  return new RegExp(`^${source}$`, 's').test(subject);
}
