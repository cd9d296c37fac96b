"""Shared by census.py and sass.py (lab tools, not product code): a seed with its tunables set, compiled by nvcc.

Tunables are set as the built-in mutator sets them, by rewriting the seed's `#define NAME value` line
(dev/tunable_sweep/set_tunable.sh): a -D on the command line would not do, since the seed's own #define follows it.
"""
import collections
import os
import re
import signal
import subprocess
import sys

signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends the tools quietly

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def set_tunables(source, overrides):
    """The seed's text with each NAME=VALUE of `overrides` written into its #define; exits naming any it lacks."""
    for item in overrides:
        name, _, value = item.partition('=')
        source, hits = re.subn(rf'^#define {re.escape(name)} +\S+', f'#define {name} {value}', source, flags=re.M)
        if not value or hits != 1:
            sys.exit(f'{os.path.basename(sys.argv[0])}: the seed declares no #define {name} to set (from "{item}")')
    return source


def tiles_a_trip(source):
    """K tiles one trip of the main loop covers: two batches of UNROLL (the stream seeds' pipeline)."""
    m = re.search(r'^#define UNROLL (\d+)', source, re.M)
    if not m:
        sys.exit(f'{os.path.basename(sys.argv[0])}: the seed declares no UNROLL')
    return 2 * int(m.group(1))


def compile_seed(seed, overrides, tmp, kind):
    """(path of the nvcc output, the seed's text as built): kind is 'ptx' or 'cubin', for sm_90a."""
    source = set_tunables(open(seed).read(), overrides)
    copy = os.path.join(tmp, os.path.basename(seed))
    open(copy, 'w').write(source)
    out = os.path.join(tmp, 'seed.' + kind)
    cmd = ['nvcc', '-std=c++17', '-O3', f'-{kind}', '-arch=sm_90a', f'-I{ROOT}/kernel_abi', '-o', out, copy]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f'{os.path.basename(sys.argv[0])}: nvcc failed on {seed}:\n{done.stderr[-2000:]}')
    return out, source


def busiest_loop(body, label, branch, opcode, mma):
    """Opcode counts (a Counter) and the mma count of the backward branch's loop in `body` (lines) with the most
    `mma` instructions, or (None, 0): `label` and `branch` are regexes whose group 1 is the label, `opcode` maps a
    line to its mnemonic or None."""
    labels = {m.group(1): i for i, line in enumerate(body) if (m := re.match(label, line.strip()))}
    best = None  # (mma count, first line, last line)
    for i, line in enumerate(body):
        m = re.search(branch, line)
        if m and m.group(1) in labels and labels[m.group(1)] < i:
            a = labels[m.group(1)]
            count = sum(opcode(x) == mma for x in body[a:i + 1])
            if best is None or count > best[0]:
                best = (count, a, i)
    if best is None or best[0] == 0:
        return None, 0
    return collections.Counter(op for line in body[best[1]:best[2] + 1] if (op := opcode(line))), best[0]


def print_mix(seed, overrides, what, ops, mma, tiles, shown, extra=''):
    """The loop's count a trip and a K tile, and its `shown` most frequent opcodes a tile."""
    total = sum(ops.values())
    print(f'{os.path.basename(seed)} {" ".join(overrides)}: {total} {what} instructions a trip of {tiles} K tiles, '
          f'{total / tiles:.1f} a tile ({mma / tiles:.0f} mma a tile{extra})')
    print('  a tile: ' + ', '.join(f'{k} {v / tiles:.1f}' for k, v in ops.most_common(shown)))
