/**
 * Reads a shell_execute command line with a real shell parser (unbash: a typed Bash AST, synchronous, no
 * dependencies) into what the approval policy needs: every simple command as words, and every construct that
 * makes the line more than one plain program run. The command runs under `sh -c`, which is not Bash, so
 * anything the two read differently (`$'…'`, `&>`, brace expansion in the command name) counts as a hazard.
 */
import { forEachChild, parse, type Command, type ParsedScript, type SyntaxNode, type Word } from 'unbash';
import { basename, commandStarts, type ParsedShellCommand } from '../../common/shell-command';

/** `sh -c '…'` and `eval '…'` inside a command are parsed too, this deep. */
const MAX_NESTED_SCRIPTS = 3;
const SHELLS = new Set([
  'sh',
  'bash',
  'rbash',
  'dash',
  'zsh',
  'ksh',
  'ksh93',
  'mksh',
  'lksh',
  'oksh',
  'pdksh',
  'yash',
  'posh',
  'ash',
  'fish',
  'csh',
  'tcsh',
  'busybox',
]);

const COMPOUND_COMMAND = 'a compound command (if, for, while, case, a subshell or a { } group)';
const SUBSTITUTION = 'a command substitution ($(…) or `…`)';
const BASH_QUOTING = 'Bash-only quoting ($\'…\' or $"…") that sh reads differently';
const HERE_DOCUMENT = 'a here-document or here-string';

/** Node types that are hazards wherever they appear. */
const HAZARDS: Partial<Record<SyntaxNode['type'], string>> = {
  If: COMPOUND_COMMAND,
  For: COMPOUND_COMMAND,
  ArithmeticFor: COMPOUND_COMMAND,
  Select: COMPOUND_COMMAND,
  While: COMPOUND_COMMAND,
  Subshell: COMPOUND_COMMAND,
  BraceGroup: COMPOUND_COMMAND,
  Case: COMPOUND_COMMAND,
  Redirected: COMPOUND_COMMAND,
  TestCommand: 'a Bash test ([[ … ]])',
  ArithmeticCommand: 'a Bash arithmetic command ((( … )))',
  Function: 'a function definition',
  Coproc: 'a coprocess',
  AndOr: 'a list (&& or ||)',
  CommandExpansion: SUBSTITUTION,
  ArithmeticCommandExpansion: SUBSTITUTION,
  ProcessSubstitution: 'a process substitution (<(…) or >(…))',
  ArithmeticExpansion: 'an arithmetic expansion ($((…)))',
  AnsiCQuoted: BASH_QUOTING,
  LocaleString: BASH_QUOTING,
  HereDoc: HERE_DOCUMENT,
  HereString: HERE_DOCUMENT,
};

/** Quote removal only: plain text, single quotes, and double quotes holding plain text. */
function isLiteral(word: Word): boolean {
  return (word.parts ?? []).every(
    (part) =>
      part.type === 'Literal' ||
      part.type === 'SingleQuoted' ||
      (part.type === 'DoubleQuoted' && part.parts.every((child) => child.type === 'Literal')),
  );
}

/** Unquoted `*`, `?` or `[` in a word: the shell expands it to file names (`/???/r?`, `[r]m`). */
function hasGlob(word: Word): boolean {
  return (word.parts ?? []).some((part) => part.type === 'Literal' && /[*?[]/.test(part.value));
}

/** Duplicating a descriptor (`2>&1`) or discarding output (`>/dev/null`) touches no file. */
function isHarmlessRedirect(node: SyntaxNode): boolean {
  if (node.type !== 'Redirect' || node.descriptor?.type === 'FileDescriptorVariable' || !node.target)
    return false;
  if (!isLiteral(node.target)) return false;
  const target = node.target.value;
  if (node.operator === '>&' || node.operator === '<&') return /^(\d+|-)$/.test(target);
  return ['>', '>>', '>|', '<'].includes(node.operator) && target === '/dev/null';
}

function wordsOf(command: Command): string[] {
  return [
    ...(command.name ? [command.name.value] : []),
    ...command.args.map((arg) => (arg.type === 'Word' ? arg.value : arg.text)),
  ];
}

/** Programs that run a command string given with `-c` / `--command` (as a shell would read it). */
const COMMAND_STRING_OPTION = new Set(['script', 'flock', 'su', 'runuser']);

/**
 * The script a simple command hands to a shell, starting at `start`, if its words are plain text: `sh -c SCRIPT`
 * (options anywhere before it: `bash --rcfile f -c`, `sh -o errexit -c`), `eval WORDS…`, `script -c`, `flock -c`,
 * `su -c`, `watch WORDS…`, `env -S STRING`.
 */
function nestedScript(command: Command, words: string[], start: number): string | undefined {
  const name = basename(words[start]!);
  const literal = (index: number) => {
    const word = index === 0 ? command.name : command.args[index - 1];
    return word?.type === 'Word' && isLiteral(word);
  };
  const plain = (from: number) => {
    const rest = words.slice(from);
    return rest.length && rest.every((_, offset) => literal(from + offset)) ? rest.join(' ') : undefined;
  };
  if (name === 'eval') return plain(start + 1);
  if (name === 'watch') {
    let index = start + 1;
    while (index < words.length && words[index]!.startsWith('-')) index++;
    return plain(index);
  }
  if (name === 'env') {
    for (let index = start + 1; index < words.length; index++) {
      const word = words[index]!;
      const split = /^(?:-[a-zA-Z]*S|--split-string=?)(.*)$/s.exec(word);
      if (!split) continue;
      if (split[1]) return literal(index) ? split[1] : undefined;
      return index + 1 < words.length && literal(index + 1) ? words[index + 1] : undefined;
    }
    return undefined;
  }
  if (COMMAND_STRING_OPTION.has(name)) {
    for (let index = start + 1; index < words.length; index++) {
      const word = words[index]!;
      const long = /^--command=(.*)$/s.exec(word);
      if (long) return literal(index) ? long[1] : undefined;
      if (word === '--command' || /^-[a-zA-Z]*c$/.test(word))
        return index + 1 < words.length && literal(index + 1) ? words[index + 1] : undefined;
    }
    return undefined;
  }
  if (!SHELLS.has(name) && !/^(?:r?bash|[a-z]*sh)[0-9.]*$/.test(name)) return undefined;
  let index = start + 1;
  if (name === 'busybox' && words[index] && SHELLS.has(words[index]!)) index++;
  // `-c` wherever it is among the options (`bash --rcfile f -c …`, `sh -o errexit -c …`): the script follows it.
  for (; index < words.length; index++) {
    const option = words[index]!;
    if (option === '--') return undefined;
    if (/^-[a-zA-Z]*c[a-zA-Z]*$/.test(option))
      return index + 1 < words.length && literal(index + 1) ? words[index + 1] : undefined;
  }
  return undefined;
}

export function parseShellCommand(source: string): ParsedShellCommand {
  const commands: string[][] = [];
  const hazards = new Set<string>();
  let parseError: string | undefined;

  const readScript = (text: string, depth: number): void => {
    let script: ParsedScript;
    try {
      script = parse(text);
    } catch (cause) {
      parseError ??= (cause as Error).message;
      return;
    }
    const error = script.errors?.[0];
    if (error) parseError ??= `${error.message} at character ${error.pos + 1}`;
    if (script.commands.length > 1) hazards.add('more than one command (; or a new line)');
    visit(script, depth);
  };

  const visit = (node: SyntaxNode, depth: number): void => {
    const hazard = HAZARDS[node.type];
    if (hazard) hazards.add(hazard);
    switch (node.type) {
      case 'Script':
        if (node.errors?.[0]) parseError ??= `${node.errors[0].message} in a substitution`;
        break;
      case 'Statement':
        if (node.background) hazards.add('a background job (&)');
        break;
      case 'Pipeline':
        if (node.commands.length > 1) hazards.add('a pipeline (|)');
        if (node.prefixes.length) hazards.add('a pipeline prefix (! or time)');
        break;
      case 'Redirect':
        if (!isHarmlessRedirect(node)) hazards.add('a redirection to or from a file');
        break;
      case 'ParameterExpansion':
        if (node.operation || node.prefix || node.index)
          hazards.add('a parameter expansion with an operation (${…:-…}, ${#…}, ${!…})');
        break;
      case 'Command':
        readCommand(node, depth);
        break;
    }
    forEachChild(node, (child) => visit(child, depth));
  };

  const readCommand = (command: Command, depth: number): void => {
    if (command.prefix.some((item) => item.type === 'Assignment')) hazards.add('a variable assignment');
    if (!command.name) {
      hazards.add('no program to run');
      return;
    }
    if (!isLiteral(command.name) || hasGlob(command.name))
      hazards.add('an expansion or pattern in the program name');
    const words = wordsOf(command);
    commands.push(words);
    // A program may also start after a wrapper (`nice r[m] -rf x`, `env rm$IFS-rf x`): there too, only plain text.
    for (const start of commandStarts(words).starts) {
      const word = start === 0 ? command.name : command.args[start - 1];
      if (start > 0 && word?.type === 'Word' && (!isLiteral(word) || hasGlob(word)))
        hazards.add('an expansion or pattern where a program may start');
    }
    if (depth >= MAX_NESTED_SCRIPTS) return;
    for (const start of commandStarts(words).starts) {
      const script = nestedScript(command, words, start);
      if (script !== undefined) readScript(script, depth + 1);
    }
  };

  readScript(source, 0);
  return { commands, hazards: [...hazards], ...(parseError ? { parseError } : {}) };
}
