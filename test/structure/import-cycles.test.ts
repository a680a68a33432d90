/**
 * The code's files form a tree of imports, type imports included: a module can be read, tested and changed from
 * the ones below it, never needing the one that uses it. The session engine's steps take `Session` (session.ts),
 * not the class that plays them; a cycle that comes back is named here with its files.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(__dirname, '../..');
const SOURCE_DIRS = [
  'activities',
  'bench',
  'common',
  'gateways',
  'infra',
  'platforms',
  'scripts',
  'workers',
  'workflows',
];
const IMPORT = /(?:^|\n)\s*(?:import|export)\s+(?:type\s+)?(?:[^'";]*?\s+from\s+)?['"](\.{1,2}\/[^'"]+)['"]/g;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    if (name === 'node_modules' || name === 'dist') return [];
    if (statSync(file).isDirectory()) return sourceFiles(file);
    return /\.tsx?$/.test(name) && !name.endsWith('.d.ts') ? [file] : [];
  });
}

function resolve(from: string, specifier: string, known: Set<string>): string | undefined {
  const base = path.resolve(path.dirname(from), specifier.replace(/\.js$/, ''));
  return [`${base}.ts`, `${base}.tsx`, path.join(base, 'index.ts')].find((file) => known.has(file));
}

/** Each strongly connected group of two or more files (Tarjan), as paths relative to the repository. */
function cycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let next = 0;
  const visit = (node: string) => {
    index.set(node, next);
    low.set(node, next++);
    stack.push(node);
    onStack.add(node);
    for (const to of graph.get(node) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node)!, low.get(to)!));
      } else if (onStack.has(to)) low.set(node, Math.min(low.get(node)!, index.get(to)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const group: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      group.push(path.relative(ROOT, member));
    } while (member !== node);
    if (group.length > 1) found.push(group.sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

describe('imports', () => {
  const files = SOURCE_DIRS.flatMap((dir) => sourceFiles(path.join(ROOT, dir)));
  const known = new Set(files);
  const graph = new Map(
    files.map((file) => {
      const text = readFileSync(file, 'utf8');
      const targets = [...text.matchAll(IMPORT)].flatMap((m) => resolve(file, m[1]!, known) ?? []);
      return [file, [...new Set(targets)]] as const;
    }),
  );

  it('reads the imports of the session engine as they are', () => {
    // The finder itself: the run imports the turn, and the turn its steps.
    const run = graph.get(path.join(ROOT, 'workflows/session/session-run.ts'))!;
    expect(run).toContain(path.join(ROOT, 'workflows/session/session.ts'));
    expect(graph.get(path.join(ROOT, 'workflows/session/turn.ts'))).toContain(
      path.join(ROOT, 'workflows/session/tool-step.ts'),
    );
    expect(
      cycles(
        new Map([
          ['a', ['b']],
          ['b', ['c']],
          ['c', ['a']],
          ['d', ['a']],
        ]),
      ),
    ).toEqual([['a', 'b', 'c']]);
  });

  it('form no cycle, type imports included', () => {
    expect(cycles(graph)).toEqual([]);
  });
});
