#!/usr/bin/env python3
"""Lab tool (not product code), no GPU needed: the PTX instruction mix of a stream seed's main loop, per K tile.

Compiles SEED.cu to PTX (nvcc -O3 -arch=sm_90a, the seed's defaults or NAME=VALUE tunables), takes the fp16 KN kernel,
finds the loop with the most mma instructions (the pipelined stream: two batches of UNROLL K tiles), and prints its
instructions by opcode divided by the tiles one trip covers (2 x UNROLL, as built).
PTX is before ptxas, so counts are indicative; ncu's executed instructions are the measured truth (they include
the B slab, residual walk and reduction the loop leaves out).
  dev/ptx_census/census.py kernels/seeds/u14_stream_sp.cu [UNROLL=2 ...]
"""
import collections
import os
import re
import sys
import tempfile

import seed_build


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    seed, overrides = argv[1], argv[2:]
    with tempfile.TemporaryDirectory() as tmp:
        ptx, source = seed_build.compile_seed(seed, overrides, tmp, 'ptx')
        text = open(ptx).read()
    tiles = seed_build.tiles_a_trip(source)
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
    total = sum(ops.values())
    print(f'{os.path.basename(seed)} {" ".join(overrides)}: {total} PTX instructions a trip of {tiles} K tiles, '
          f'{total / tiles:.1f} a tile ({best[0] / tiles:.0f} mma a tile)')
    print('  a tile: ' + ', '.join(f'{k} {v / tiles:.1f}' for k, v in ops.most_common(16)))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
