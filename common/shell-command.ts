/**
 * A shell command line as the approval policy sees it: its simple commands (words after quote removal) and
 * what makes it more than one harmless program run. Parsed on the Node side (activities/tools/parse-shell.ts)
 * and handed to the pure policy, which checks deny patterns against every simple command and allow patterns
 * and grants only against a command with nothing to hide.
 */

export interface ParsedShellCommand {
  /** Every simple command found anywhere (lists, pipelines, substitutions, `sh -c` strings), as words. */
  commands: string[][];
  /** What the parser cannot prove harmless, in words ("a pipeline (|)"); empty for one plain command. */
  hazards: string[];
  /** Set when the parser could not read the whole line; `commands` then holds what it could see. */
  parseError?: string;
}

/**
 * Programs that run the program named in their arguments. Their options are not parsed: every later word is
 * tried as the start of the command, which may deny more than needed but never less.
 */
const WRAPPERS = new Set([
  'busybox',
  'builtin',
  'caffeinate',
  'chroot',
  'chrt',
  'choom',
  'command',
  'doas',
  'env',
  'exec',
  'fakeroot',
  'firejail',
  'flock',
  'ionice',
  'ltrace',
  'nice',
  'nohup',
  'nsenter',
  'parallel',
  'prlimit',
  'runuser',
  'script',
  'setpriv',
  'setsid',
  'sg',
  'stdbuf',
  'strace',
  'su',
  'sudo',
  'taskset',
  'time',
  'timeout',
  'torsocks',
  'unbuffer',
  'unshare',
  'watch',
  'xargs',
]);
/** `find … -exec rm {} ;` runs the words after these. */
const FIND_ACTIONS = new Set(['-exec', '-execdir', '-ok', '-okdir']);
/** More starts than this in one simple command are not followed; the command then needs approval. */
export const MAX_COMMAND_STARTS = 32;

export function basename(word: string): string {
  const trimmed = word.replace(/\/+$/, '');
  return trimmed.slice(trimmed.lastIndexOf('/') + 1) || word;
}

/**
 * Where a command may start inside a simple command's words: 0, and after each wrapper (`sudo`, `env`,
 * `xargs`, `find -exec`, ...), transitively. `complete` is false when there were more than MAX_COMMAND_STARTS.
 */
export function commandStarts(words: readonly string[]): { starts: number[]; complete: boolean } {
  const seen = new Set<number>();
  const queue = [0];
  while (queue.length) {
    const start = queue.shift()!;
    if (seen.has(start) || start >= words.length) continue;
    if (seen.size >= MAX_COMMAND_STARTS) return { starts: [...seen], complete: false };
    seen.add(start);
    const name = basename(words[start]!);
    if (WRAPPERS.has(name)) for (let next = start + 1; next < words.length; next++) queue.push(next);
    if (name === 'find')
      for (let next = start + 1; next < words.length; next++)
        if (FIND_ACTIONS.has(words[next]!)) queue.push(next + 1);
  }
  return { starts: [...seen].sort((a, b) => a - b), complete: true };
}

/**
 * Every text a program could start at in one simple command (each word onward, by its basename), beyond the
 * starts the policy knows: where a deny pattern matches one of these, an unknown wrapper might run the denied
 * program, so the command goes to a person.
 */
export function everyView(words: readonly string[]): string[] {
  return words.map((word, index) => [basename(word), ...words.slice(index + 1)].join(' '));
}

/**
 * The texts deny patterns are checked against for one simple command: the words as written, and from each
 * command start the words with the program named by its basename (`/bin/rm -rf x` and `sudo rm -rf x` are
 * both also checked as `rm -rf x`).
 */
export function commandViews(words: readonly string[]): { views: string[]; complete: boolean } {
  const { starts, complete } = commandStarts(words);
  const views = new Set([words.join(' ')]);
  for (const start of starts) views.add([basename(words[start]!), ...words.slice(start + 1)].join(' '));
  return { views: [...views], complete };
}
