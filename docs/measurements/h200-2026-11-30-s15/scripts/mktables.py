#!/usr/bin/env python3
"""Markdown tables for the closing note from a `sparseditto bench` CSV: one line a task (its n values side by
side), geomeans by dtype, best-seed counts, and (with --old CSV) the row-time ratio against an older table.
   mktables.py BENCH.csv [--old OLD.csv] [--csr]
--csr: a cell's last figure is the speedup over cuSPARSE CSR (the dlmc target) instead of over cuBLAS dense."""
import csv, math, sys
from collections import Counter, OrderedDict

SHORT = {"dense_cublas": "dense", "dense_cublaslt": "dense_lt", "nm24_stream_sp": "nm24_stream",
         "u14_stream_sp": "u14_stream", "pair_mask_tc": "pair_mask"}

def rows(path):
    with open(path) as f:
        return list(csv.DictReader(f))

def baselines(r):
    out = {}
    for item in r["baselines"].split(";"):
        if "=" in item:
            k, v = item.split("=")
            out[k] = float(v)
    return out

def gm(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")

def main():
    args = sys.argv[1:]
    path = args[0]
    old = args[args.index("--old") + 1] if "--old" in args else None
    vs_csr = "--csr" in args
    rs = rows(path)
    by_task = OrderedDict()
    for r in rs:
        by_task.setdefault(r["task"], []).append(r)
    ns = sorted({int(r["n"]) for r in rs})
    print("| task | " + " | ".join(f"n={n}: best, ms, x best baseline, x {'cuSPARSE' if vs_csr else 'dense'}" if i == 0 else f"n={n}" for i, n in enumerate(ns)) + " |")
    print("|---" * (len(ns) + 1) + "|")
    for task, trs in by_task.items():
        cells = {int(r["n"]): r for r in trs}
        out = []
        for n in ns:
            r = cells.get(n)
            if r is None:
                out.append("-")
                continue
            if not r["best_kernel"]:
                out.append("none ran")
                continue
            flag = " (shared)" if r["shared_gpu"] not in ("0", "") else ""
            last = (baselines(r)["cusparse_csr"] / float(r["kernel_ms"]) if vs_csr else float(r["speedup_over_dense"]))
            out.append(f'{SHORT.get(r["best_kernel"], r["best_kernel"])} {float(r["kernel_ms"]):.4f} '
                       f'{float(r["speedup_over_best_baseline"]):.2f} {last:.2f}{flag}')
        print(f"| {task.removeprefix('llm_')} | " + " | ".join(out) + " |")
    print()
    for dtype in sorted({r["dtype"] for r in rs}):
        d = [r for r in rs if r["dtype"] == dtype and r["best_kernel"]]
        csr = [baselines(r)["cusparse_csr"] / float(r["kernel_ms"]) for r in d if "cusparse_csr" in baselines(r)]
        print(f"{dtype}: {len(d)} rows; geomean x best baseline {gm([float(r['speedup_over_best_baseline']) for r in d]):.2f}, "
              f"x cuBLAS dense {gm([float(r['speedup_over_dense']) for r in d]):.2f}, x cuSPARSE CSR {gm(csr):.2f}")
    print("best seed counts:", ", ".join(f"{k} {v}" for k, v in Counter(r["best_kernel"] for r in rs).most_common()))
    fails = [(r["task"], r["n"], r["failures"]) for r in rs if r["failures"]]
    print("rows with failures:", len(fails), fails[:10])
    print("rows flagged shared:", sum(1 for r in rs if r["shared_gpu"] not in ("0", "")))
    if old:
        o = {(r["task"], r["n"]): r for r in rows(old)}
        ratios = [float(r["kernel_ms"]) / float(o[(r["task"], r["n"])]["kernel_ms"]) for r in rs
                  if (r["task"], r["n"]) in o and r["kernel_ms"] and o[(r["task"], r["n"])]["kernel_ms"]]
        changed = [(r["task"], r["n"], o[(r["task"], r["n"])]["best_kernel"], r["best_kernel"]) for r in rs
                   if (r["task"], r["n"]) in o and o[(r["task"], r["n"])]["best_kernel"] != r["best_kernel"]]
        print(f"against {old}: {len(ratios)} rows matched, geomean new/old best time {gm(ratios):.3f}; "
              f"best seed changed in {len(changed)} rows")
        for c in changed:
            print("  ", *c)

main()
