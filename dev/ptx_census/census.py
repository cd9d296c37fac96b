#!/usr/bin/env python3
"""Lab tool (not product code), no GPU needed: the PTX instruction mix of a stream seed's main loop, per K tile.

Compiles SEED.cu to PTX (nvcc -O3 -arch=sm_90a, the seed's defaults or NAME=VALUE tunables), takes the fp16 KN kernel,
finds the loop with the most mma instructions (the pipelined stream: two batches of UNROLL K tiles), and prints its
instructions by opcode divided by the tiles one trip covers (2 x UNROLL, as built).
PTX is before ptxas, so counts are indicative; ncu's executed instructions are the measured truth (they include
the B slab, residual walk and reduction the loop leaves out).
  dev/ptx_census/census.py kernels/seeds/u14_stream_sp.cu [UNROLL=2 ...]
"""
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
    def opcode(line):
        t = line.strip()
        if not t or t[0] in '/${}.':
            return None
        if t.startswith('@'):
            t = t.split(None, 1)[1]
        return t.split()[0].rstrip(';').split('.')[0]
    ops, mma = seed_build.busiest_loop(body, r'^(\$L__BB\d+_\d+):', r'bra(?:\.uni)?\s+(\$L__BB\d+_\d+);', opcode, 'mma')
    if ops is None:
        print(f'census: no loop with mma in {seed}', file=sys.stderr)
        return 1
    seed_build.print_mix(seed, overrides, 'PTX', ops, mma, tiles, 16)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
