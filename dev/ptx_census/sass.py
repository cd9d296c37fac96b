#!/usr/bin/env python3
"""Lab tool (not product code), no GPU needed: the SASS of a stream seed's main loop, per K tile, by opcode.

census.py's PTX comes before ptxas; this is what ptxas made of it, for sm_90a: SEED.cu (defaults or NAME=VALUE
tunables) compiled to a cubin, disassembled, and the fp16 KN kernel's loop with the most HMMA (the pipelined
stream: two batches of UNROLL K tiles) counted by opcode and divided by the tiles one trip covers. Static counts:
each instruction of the loop once, whatever branch a warp takes inside it; ncu's executed counts are the measure.
The toolkit here has no disassembler: fetch_nvdisasm.sh takes CUDA 11.8's from Debian, and since CUDA 13 marks
its cubins in a newer header layout 11.8 refuses, a copy of the cubin gets the old marks (sm_90, ABI 7) first,
and the few newer opcodes 11.8 cannot decode (VIADD) are counted from the cubin (NEWER_OPCODES).
  dev/ptx_census/sass.py kernels/seeds/u14_stream_sp.cu [PRMT_EXPAND=1 ...]
  dev/ptx_census/sass.py --kernel 'I6__halfNS_4TileILi32ELi128' kernels/seeds/bsr_mma.cu   (another seed: the function
      whose mangled name contains the text; a seed without UNROLL is counted a trip of its loop; HGMMA counts as mma)
  dev/ptx_census/sass.py --all kernels/seeds/*.cu   (an inventory: every fp16 function's busiest mma loop, one line
      each: instructions a trip, mma a trip, and instructions an mma; static, so untaken paths count too)
"""
import os
import re
import struct
import subprocess
import sys
import tempfile

import seed_build

NVDISASM = os.environ.get('NVDISASM', os.path.join(os.environ.get('XDG_CACHE_HOME', os.path.expanduser('~/.cache')),
                                                   'sparseditto/nvdisasm-11.8/usr/bin/nvdisasm'))


# Opcodes (the low 9 bits of an instruction's first word) ptxas 13 emits and nvdisasm 11.8 does not know: it leaves
# them out of the listing, labels on them included, so they are read from the cubin and listed as NOPs.
NEWER_OPCODES = {0x036: 'VIADD', 0x046: 'op046', 0x048: 'op048'}


def text_sections(data):
    """{function name: (file offset, size)} of the cubin's .text.* sections."""
    shoff, = struct.unpack_from('<Q', data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from('<HHH', data, 0x3A)
    heads = [struct.unpack_from('<IIQQQQIIQQ', data, shoff + i * shentsize) for i in range(shnum)]
    names = heads[shstrndx][4]
    out = {}
    for h in heads:
        name = data[names + h[0]:data.index(b'\0', names + h[0])].decode()
        if name.startswith('.text.'):
            out[name[len('.text.'):]] = (h[4], h[5])
    return out


def listed_addresses(listing):
    """{function name: set of instruction addresses} in an nvdisasm -c listing."""
    seen, function = {}, None
    for line in listing.split('\n'):
        if m := re.search(r'\.section\s+\.text\.(\S+?),', line):
            function = seen.setdefault(m.group(1), set())
        elif (m := re.match(r'\s*/\*([0-9a-f]+)\*/', line)) and function is not None:
            function.add(int(m.group(1), 16))
    return seen


def disassemble(cubin):
    """(nvdisasm's listing, {(function, address): name} of the instructions it could not decode, listed as NOPs)."""
    data = bytearray(open(cubin, 'rb').read())
    if data[:4] != b'\x7fELF' or data[4] != 2:
        sys.exit(f'sass: {cubin} is not a 64-bit ELF cubin')
    data[7], data[8] = 0x33, 7  # the marks nvdisasm 11.8 reads: OS ABI 0x33, ABI version 7, SM90 (64-bit, unified)
    struct.pack_into('<I', data, 0x30, 0x005A055A)
    sections, patched = text_sections(data), {}
    for attempt in range(2):
        open(cubin + '.old', 'wb').write(data)
        done = subprocess.run([NVDISASM, '-c', cubin + '.old'], capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f'sass: nvdisasm failed:\n{done.stderr[-2000:]}')
        listed = listed_addresses(done.stdout)
        gaps = [(f, a) for f, (off, size) in sections.items() for a in range(0, size, 16) if a not in listed.get(f, ())]
        if not gaps or attempt == 1:
            return done.stdout, patched
        for f, a in gaps:
            at = sections[f][0] + a
            op = struct.unpack_from('<Q', data, at)[0] & 0x1FF
            patched[(f, a)] = NEWER_OPCODES.get(op, f'op{op:03x}')
            struct.pack_into('<QQ', data, at, 0x7918, 0x000FC00000000000)  # NOP


def kernel_lines(sass, marker):
    """(name, lines) of the function whose name contains `marker` (I6__halfLb0E: the <__half, false> one)."""
    heads = [m for m in re.finditer(r'^\s*\.section\s+\.text\.(\S+?),', sass, re.M)]
    for i, m in enumerate(heads):
        if marker in m.group(1):
            end = heads[i + 1].start() if i + 1 < len(heads) else len(sass)
            return m.group(1), sass[m.end():end].split('\n')
    return None, None


def opcode(line, function, patched):
    """The instruction's mnemonic without modifiers (HMMA for HMMA.SP.16832.F32), or None for non-instructions."""
    m = re.match(r'\s*/\*([0-9a-f]+)\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)', line)
    return patched.get((function, int(m.group(1), 16)), m.group(2)) if m else None


def loop_ops(function, body, patched):
    """seed_build.busiest_loop over a function's lines, HGMMA counted as HMMA."""
    def op(line):
        name = opcode(line, function, patched)
        return 'HMMA' if name == 'HGMMA' else name
    return seed_build.busiest_loop(body, r'^(\.L_x_\d+):', r'\bBRA\s+`?\(?(\.L_x_\d+)\)?', op, 'HMMA')


def inventory(seeds):
    """One line a fp16 function of each seed (defaults): its busiest mma loop's size and mma count a trip."""
    for seed in seeds:
        with tempfile.TemporaryDirectory() as tmp:
            cubin, _ = seed_build.compile_seed(seed, [], tmp, 'cubin')
            listing, patched = disassemble(cubin)
        heads = list(re.finditer(r'^\s*\.section\s+\.text\.(\S+?),', listing, re.M))
        for i, m in enumerate(heads):
            function = m.group(1)
            if 'I6__half' not in function:
                continue
            end = heads[i + 1].start() if i + 1 < len(heads) else len(listing)
            ops, mma = loop_ops(function, listing[m.end():end].split('\n'), patched)
            kernel = re.sub(r'^_ZN\d+_GLOBAL__N__\w+?_cu_\w+?\d+(?=[A-Z])', '', function)[:60]
            if ops is None:
                print(f'{os.path.basename(seed):24} {kernel:60} no mma loop')
                continue
            total = sum(ops.values())
            print(f'{os.path.basename(seed):24} {kernel:60} {total:5d} a trip, {mma:3d} mma, {total / mma:5.1f} an mma')
    return 0


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    if not os.access(NVDISASM, os.X_OK):
        print(f'sass: no nvdisasm at {NVDISASM}: run dev/ptx_census/fetch_nvdisasm.sh (or set NVDISASM)', file=sys.stderr)
        return 2
    if argv[1] == '--all':
        return inventory(argv[2:])
    marker = 'I6__halfLb0E'  # the stream seeds' <__half, false>: fp16, KN
    if argv[1] == '--kernel' and len(argv) > 3:
        marker, argv = argv[2], argv[2:]
    seed, overrides = argv[1], argv[2:]
    with tempfile.TemporaryDirectory() as tmp:
        cubin, source = seed_build.compile_seed(seed, overrides, tmp, 'cubin')
        listing, patched = disassemble(cubin)
    tiles = seed_build.tiles_a_trip(source) if re.search(r'^#define UNROLL ', source, re.M) else 1
    function, body = kernel_lines(listing, marker)
    if body is None:
        print(f'sass: no kernel whose name contains {marker} in {seed}', file=sys.stderr)
        return 1
    ops, mma = loop_ops(function, body, patched)
    if ops is None:
        print(f'sass: no loop with HMMA in {seed}', file=sys.stderr)
        return 1
    everything = sum(1 for line in body if opcode(line, function, patched))
    seed_build.print_mix(seed, overrides, 'SASS', ops, mma, tiles, 18, f'; the kernel has {everything} in all')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
