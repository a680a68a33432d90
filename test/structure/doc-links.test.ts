/**
 * Every link between our own documents works: the file exists, and the `#anchor` names a heading of it (GitHub's
 * slugs). A newcomer follows README's links first; one that breaks is a wrong turn nobody notices until then.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(__dirname, '../..');
const documents = [
  'README.md',
  'SECURITY.md',
  ...readdirSync(path.join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
].filter((file) => existsSync(path.join(ROOT, file)));

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens; repeats get -1, -2, … */
export function slugsOf(markdown: string): Set<string> {
  const slugs = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const heading = !fenced && /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const text = heading[1]!
      .replace(/`/g, '')
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/<[^>]+>/g, '');
    const base = text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    slugs.add(count ? `${base}-${count}` : base);
  }
  return slugs;
}

/** Links in the text outside code (fenced blocks and inline code), with their line numbers. */
function linksOf(markdown: string): { target: string; line: number }[] {
  const links: { target: string; line: number }[] = [];
  let fenced = false;
  markdown.split('\n').forEach((raw, index) => {
    if (/^\s*(```|~~~)/.test(raw)) {
      fenced = !fenced;
      return;
    }
    if (fenced) return;
    const line = raw.replace(/`[^`]*`/g, '');
    for (const match of line.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g))
      links.push({ target: match[1]!, line: index + 1 });
  });
  return links;
}

describe('links between our documents', () => {
  it('finds GitHub’s anchors for headings with code, punctuation and repeats', () => {
    expect(
      slugsOf('# Who may approve: four-eyes and quorum\n## `npm start` here\n## Deploys\n## Deploys'),
    ).toEqual(new Set(['who-may-approve-four-eyes-and-quorum', 'npm-start-here', 'deploys', 'deploys-1']));
  });

  it('point at files that exist and headings they have', () => {
    const broken: string[] = [];
    for (const file of documents) {
      const text = readFileSync(path.join(ROOT, file), 'utf8');
      for (const { target, line } of linksOf(text)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto: …
        const [pathPart, anchor] = target.split('#', 2) as [string, string | undefined];
        const resolved = pathPart
          ? path.resolve(path.dirname(path.join(ROOT, file)), decodeURI(pathPart))
          : path.join(ROOT, file);
        const where = `${file}:${line} → ${target}`;
        if (!existsSync(resolved)) {
          broken.push(`${where}: no such file`);
          continue;
        }
        if (anchor === undefined || !resolved.endsWith('.md') || statSync(resolved).isDirectory()) continue;
        if (!slugsOf(readFileSync(resolved, 'utf8')).has(anchor.toLowerCase()))
          broken.push(`${where}: no heading with that anchor`);
      }
    }
    expect(broken).toEqual([]);
  });
});
