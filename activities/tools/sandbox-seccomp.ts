/**
 * The seccomp filter bwrap installs for every sandboxed command (`--seccomp`): the kernel keyring calls
 * (`add_key`, `request_key`, `keyctl`) fail with EPERM, everything else is allowed. Neither bwrap nor setpriv
 * gives a command a keyring of its own, so without this a command could read keys in the worker's session
 * keyring and leave keys there for the commands of other conversations (another uid, same keyring), as
 * Flatpak's sandbox blocks them for the same reason. A process of an architecture this filter does not know gets
 * EPERM for every call: the sandbox probe then fails at worker start and says so, rather than run unfiltered.
 *
 * Classic BPF over `struct seccomp_data` (nr at offset 0, arch at 4), 8 bytes per instruction in host order.
 */
import { endianness } from 'node:os';

const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const AND_K = 0x54;
const RET_K = 0x06;
const RET_ALLOW = 0x7fff0000;
const RET_EPERM = 0x00050000 | 1;
/** x32 system calls are x86-64 numbers with this bit set. */
const X32_BIT = 0x40000000;

/** Per audit architecture: the numbers of add_key, request_key and keyctl. */
const KEYRING_CALLS: [arch: number, calls: number[]][] = [
  [0xc000003e, [248, 249, 250]], // x86-64 (and x32, bit cleared)
  [0x40000003, [286, 287, 288]], // i386, also reachable from x86-64 hosts
  [0xc00000b7, [217, 218, 219]], // aarch64
  [0x40000028, [309, 310, 311]], // arm, also reachable from aarch64 hosts
];

type Instruction = { code: number; k: number; jt?: string; jf?: string } | { label: string };

function program(): Instruction[] {
  const out: Instruction[] = [{ code: LD_W_ABS, k: 4 }];
  KEYRING_CALLS.forEach(([arch], i) => out.push({ code: JEQ_K, k: arch, jt: `arch${i}` }));
  out.push({ code: RET_K, k: RET_EPERM });
  KEYRING_CALLS.forEach(([, calls], i) => {
    out.push({ label: `arch${i}` }, { code: LD_W_ABS, k: 0 });
    if (i === 0) out.push({ code: AND_K, k: ~X32_BIT >>> 0 });
    for (const nr of calls) out.push({ code: JEQ_K, k: nr, jt: 'deny' });
    out.push({ code: RET_K, k: RET_ALLOW });
  });
  out.push({ label: 'deny' }, { code: RET_K, k: RET_EPERM });
  return out;
}

/** The filter as bwrap reads it from its `--seccomp` descriptor. */
export function keyringFilter(): Buffer {
  const instructions = program();
  const at = new Map<string, number>();
  let n = 0;
  for (const item of instructions)
    if ('label' in item) at.set(item.label, n);
    else n++;
  const buffer = Buffer.alloc(n * 8);
  const little = endianness() === 'LE';
  let index = 0;
  for (const item of instructions) {
    if ('label' in item) continue;
    // Jumps are forward only, counted from the next instruction; 0 falls through.
    const offset = (label?: string) => (label === undefined ? 0 : at.get(label)! - index - 1);
    const base = index * 8;
    if (little) {
      buffer.writeUInt16LE(item.code, base);
      buffer.writeUInt32LE(item.k, base + 4);
    } else {
      buffer.writeUInt16BE(item.code, base);
      buffer.writeUInt32BE(item.k, base + 4);
    }
    buffer.writeUInt8(offset(item.jt), base + 2);
    buffer.writeUInt8(offset(item.jf), base + 3);
    index++;
  }
  return buffer;
}
