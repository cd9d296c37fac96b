#!/usr/bin/env python3
"""Lab (not product code): a seed against its variants benched as seeds of their own (`bench --seeds DIR` with
SEED_SUFFIX.cu beside SEED.cu, e.g. u14_stream_sp_before.cu or nm24_stream_sp_slab8.cu), row by row from bench.csv.

For each row and each seed that has a variant there: the seed's time, each variant's, and variant / seed (above 1:
the variant is slower). A seed or variant whose short screen was beyond the bench's margin has no full timing and
shows as `screened` (its screen said it was slower than the row's best by more than the margin).
  dev/device_calls/variants_from_bench.py dist/bench_llm_n16_s18/bench.csv [--suffix _before]
"""
import csv
import signal
import sys

signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends it quietly


def timings(cell):
    """{seed: ms} from a bench.csv seeds or screened cell (name=ms;name=ms)."""
    out = {}
    for item in filter(None, (cell or '').split(';')):
        name, _, ms = item.partition('=')
        try:
            out[name] = float(ms)
        except ValueError:
            pass
    return out


def base_of(name, names):
    """The longest other name that `name` extends with '_...': the seed it is a variant of, or None."""
    bases = [o for o in names if o != name and name.startswith(o + '_')]
    return max(bases, key=len) if bases else None


def shown(name, ms, screened):
    return f'{ms:9.4f}' if ms else f'{"screened" if name in screened else "-":>9}'


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    suffix = argv[argv.index('--suffix') + 1] if '--suffix' in argv else None
    with open(argv[1], newline='') as f:
        rows = list(csv.DictReader(f))
    print(f'{"task":42} {"n":>5} {"seed":24} {"ms":>9}  {"variant":36} {"ms":>9} {"variant/seed":>12}')
    for row in rows:
        timed, screened = timings(row.get('seeds')), set(timings(row.get('screened')))
        names = set(timed) | screened
        for v in sorted(names):
            seed = base_of(v, names)
            if seed is None or (suffix and not v.endswith(suffix)):
                continue
            a, b = timed.get(seed), timed.get(v)
            ratio = f'{b / a:12.3f}' if a and b else f'{"-":>12}'
            print(f'{row["task"]:42} {row["n"]:>5} {seed:24} {shown(seed, a, screened)}  {v:36} {shown(v, b, screened)} {ratio}')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
