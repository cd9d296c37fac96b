#!/usr/bin/env python3
"""Lab tool (not product code), no GPU needed: the PTX instruction mix of a stream seed's main loop, per K tile.

Compiles SEED.cu to PTX (nvcc -O3 -arch=sm_90a, the seed's defaults or -D overrides), takes the fp16 KN kernel,
finds the loop with the most mma instructions (the pipelined stream: two batches of UNROLL K tiles), and prints its
instructions by opcode divided by the tiles one trip covers (2 x UNROLL, read from the seed or its override).
PTX is before ptxas, so counts are indicative; ncu's executed instructions are the measured truth (they include
the B slab, residual walk and reduction the loop leaves out).
  dev/ptx_census/census.py kernels/seeds/u14_stream_sp.cu [-DUNROLL=2 ...]
"""
import collections
import os
import re
import subprocess
import sys
import tempfile


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    seed, defines = argv[1], argv[2:]
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    unroll = None
    for d in defines:
        if d.startswith('-DUNROLL='):
            unroll = int(d.split('=', 1)[1])
    if unroll is None:
        m = re.search(r'^#define UNROLL (\d+)', open(seed).read(), re.M)
        if not m:
            print(f'census: {seed} declares no UNROLL', file=sys.stderr)
            return 2
        unroll = int(m.group(1))
    with tempfile.TemporaryDirectory() as tmp:
        ptx = os.path.join(tmp, 'seed.ptx')
        cmd = ['nvcc', '-std=c++17', '-O3', '-ptx', '-arch=sm_90a', f'-I{root}/kernel_abi', *defines, '-o', ptx, seed]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            print(f'census: nvcc failed on {seed}:\n{done.stderr[-2000:]}', file=sys.stderr)
            return 1
        text = open(ptx).read()
    entries = [m.start() for m in re.finditer(r'^\.entry ', text, re.M)] + [len(text)]
    body = None
    for a, b in zip(entries, entries[1:]):
        head = text[a:text.find('(', a)]
        if 'I6__halfLb0E' in head:  # <__half, false>: fp16, KN
            body = text[a:b].split('\n')
    if body is None:
        print(f'census: no fp16 KN kernel in {seed}', file=sys.stderr)
        return 1
    labels = {m.group(1): i for i, line in enumerate(body) if (m := re.match(r'^(\$L__BB\d+_\d+):', line.strip()))}
    best = None  # (mma count, first line, last line) of the loop with the most mma
    for i, line in enumerate(body):
        m = re.search(r'bra(?:\.uni)?\s+(\$L__BB\d+_\d+);', line)
        if m and m.group(1) in labels and labels[m.group(1)] < i:
            a = labels[m.group(1)]
            mma = sum('mma.' in x for x in body[a:i + 1])
            if best is None or mma > best[0]:
                best = (mma, a, i)
    if best is None or best[0] == 0:
        print(f'census: no loop with mma in {seed}', file=sys.stderr)
        return 1
    ops = collections.Counter()
    for line in body[best[1]:best[2] + 1]:
        t = line.strip()
        if not t or t[0] in '/${}.':
            continue
        if t.startswith('@'):
            t = t.split(None, 1)[1]
        ops[t.split()[0].rstrip(';').split('.')[0]] += 1
    tiles = 2 * unroll
    total = sum(ops.values())
    print(f'{os.path.basename(seed)} {" ".join(defines)}: {total} PTX instructions a trip of {tiles} K tiles, '
          f'{total / tiles:.1f} a tile ({best[0] / tiles:.0f} mma a tile)')
    print('  a tile: ' + ', '.join(f'{k} {v / tiles:.1f}' for k, v in ops.most_common(16)))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
