/**
 * What one more cached workflow holds, by kind of object: reads two V8 heap snapshots written by memory-probe.ts
 * (PROBE_SNAPSHOTS), sums each (node type, constructor or string) group's self size in both, and prints the
 * groups that grew most, per cached workflow.
 *
 * Usage: node --import tsx bench/floor/heap-diff.ts base.heapsnapshot after.heapsnapshot [workflows] [rows]
 */
import { readFileSync } from 'node:fs';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
  nodes: number[];
  strings: string[];
}

/** Self size and count per group; strings are grouped by their first characters. */
export function groups(file: string): Map<string, { size: number; count: number }> {
  const heap = JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
  const fields = heap.snapshot.meta.node_fields;
  const types = heap.snapshot.meta.node_types[0];
  const [typeAt, nameAt, sizeAt] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f));
  const out = new Map<string, { size: number; count: number }>();
  for (let i = 0; i < heap.nodes.length; i += fields.length) {
    const type = types[heap.nodes[i + typeAt!]!]!;
    let name = heap.strings[heap.nodes[i + nameAt!]!]!;
    if (type === 'string' || type === 'concatenated string' || type === 'sliced string')
      name = JSON.stringify(name.slice(0, 60));
    const key = `${type}: ${name}`;
    const group = out.get(key) ?? { size: 0, count: 0 };
    group.size += heap.nodes[i + sizeAt!]!;
    group.count++;
    out.set(key, group);
  }
  return out;
}

if (require.main === module) {
  const [baseFile, afterFile, workflows = '1', rows = '40'] = process.argv.slice(2);
  const base = groups(baseFile!);
  const after = groups(afterFile!);
  const n = Number(workflows);
  const diff = [...after].map(([key, a]) => {
    const b = base.get(key) ?? { size: 0, count: 0 };
    return { key, bytes: (a.size - b.size) / n, count: (a.count - b.count) / n };
  });
  const total = diff.reduce((sum, d) => sum + d.bytes, 0);
  process.stdout.write(`per workflow: ${(total / 1024).toFixed(1)} KiB in all\n`);
  for (const d of diff.sort((x, y) => y.bytes - x.bytes).slice(0, Number(rows)))
    process.stdout.write(
      `${(d.bytes / 1024).toFixed(2).padStart(8)} KiB ${d.count.toFixed(1).padStart(7)}  ${d.key.slice(0, 110)}\n`,
    );
}
