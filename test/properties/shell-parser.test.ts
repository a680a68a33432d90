/**
 * Property tests of the shell-command parser the approval policy trusts (fast-check): whatever words a command is
 * made of, a second command joined to it by any shell construct is seen (its words are among the simple commands)
 * and the line is never taken for one plain program run; and no input, however odd, makes the parser throw.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseShellCommand } from '../../activities/tools/parse-shell';

/**
 * A plain program run: a program name no wrapper or shell has (`qz…`: `sudo`, `env`, `sh`, `xargs` run the
 * program named after them, which the parser follows on purpose), then arguments of harmless characters.
 */
const program = fc.stringMatching(/^qz[a-z0-9]{0,6}$/);
const argument = fc.stringMatching(/^[a-z0-9][a-z0-9._/=-]{0,11}$/);
const command = fc
  .tuple(program, fc.array(argument, { maxLength: 3 }))
  .map(([name, args]) => [name, ...args]);

/** Ways to make one line run a second command. */
const JOINS: ((a: string, b: string) => string)[] = [
  (a, b) => `${a}; ${b}`,
  (a, b) => `${a} && ${b}`,
  (a, b) => `${a} || ${b}`,
  (a, b) => `${a} | ${b}`,
  (a, b) => `${a} & ${b}`,
  (a, b) => `${a}\n${b}`,
  (a, b) => `${a} $(${b})`,
  (a, b) => `${a} \`${b}\``,
  (a, b) => `${a} "$(${b})"`,
  (a, b) => `${a} <(${b})`,
  (a, b) => `sh -c '${b}'; ${a}`,
  (a, b) => `${a} && bash -c "${b}"`,
];

describe('the shell-command parser, for any command', () => {
  it('sees every command a line runs, and never calls a joined line one plain run', () => {
    fc.assert(
      fc.property(command, command, fc.integer({ min: 0, max: JOINS.length - 1 }), (first, second, join) => {
        const line = JOINS[join]!(first.join(' '), second.join(' '));
        const parsed = parseShellCommand(line);
        expect(parsed.hazards.length + (parsed.parseError ? 1 : 0)).toBeGreaterThan(0);
        const seen = parsed.commands.map((words) => words.join(' '));
        expect(seen).toContain(second.join(' '));
      }),
      { numRuns: 3_000 },
    );
  });

  it('reads one plain run as exactly its words, with nothing to hide', () => {
    fc.assert(
      fc.property(command, (words) => {
        const parsed = parseShellCommand(words.join(' '));
        expect(parsed).toMatchObject({ commands: [words], hazards: [] });
      }),
      { numRuns: 2_000 },
    );
  });

  it('never throws, whatever the line', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300, unit: 'binary' }), (line) => {
        const parsed = parseShellCommand(line);
        expect(Array.isArray(parsed.commands)).toBe(true);
      }),
      { numRuns: 5_000 },
    );
  });
});
