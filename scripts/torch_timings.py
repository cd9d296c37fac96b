#!/usr/bin/env python3
"""The PyTorch timings table of issue 26 on a GPU machine with PyTorch (CUDA), for an exported run.

    python3 scripts/torch_timings.py EXPORT_DIR [--tasks a,b] [--n 16,2048] [--reps 100]

EXPORT_DIR is what `sparseditto export RUN --torch --out EXPORT_DIR` wrote: the kernels' .cu files and
torch/sparseditto_<run>/ (the package). Self-contained: it needs torch with CUDA, a C++ compiler and
nvcc, nothing of SparseDitto's own build. Per task it builds the kernel library where kernels.json
says (EXPORT_DIR/build.sh when the export has one, else nvcc on <task>.cu with the cuBLAS libraries),
makes a random weight of the task's pattern, SparseLinear.from_linear's it, and for each n prints:
  kernel      the exported kernel's run called directly (ctypes), B and C already in its layout
  op          torch.ops.sparseditto.spmm for a kn kernel (x [n, K] in, the transposing copy included), or
              spmm_nk for an nk one (x and y as PyTorch has them: no copy; the task's "layout" in kernels.json)
  op graph    the same op replayed from a CUDA graph
  F.linear    dense torch (cuBLAS), eager and from a CUDA graph
  torch CSR   W.to_sparse_csr() @ x^T (cuSPARSE), where torch supports it
  torch 2:4   F.linear with to_sparse_semi_structured(W) (cuSPARSELt/CUTLASS), for 2:4 tasks
in microseconds: median over --reps calls timed each by CUDA events on the current stream, called
back to back after warm-up (so host overhead shows where the GPU waits for the host), with the
10th-90th percentile spread; then the correctness of op, layer and kernel against F.linear in fp32,
the layer in a CUDA graph and at an n outside the prepared ones (the F.linear fallback), and
torch.library.opcheck where torch has it. Exit 1 when a correctness check fails.
"""

import argparse
import ctypes
import glob
import importlib
import os
import shutil
import subprocess
import sys
import time

import torch
import torch.nn.functional as F


def find_package(export_dir):
    found = sorted(glob.glob(os.path.join(export_dir, "torch", "sparseditto_*", "kernels.json")))
    if len(found) != 1:
        sys.exit(f"torch_timings: expected one package under {export_dir}/torch (export --torch), found {len(found)}")
    folder = os.path.dirname(found[0])
    sys.path.insert(0, os.path.dirname(folder))
    return importlib.import_module(os.path.basename(folder)), folder


def build_library(export_dir, package_dir, task):
    library = os.path.normpath(os.path.join(package_dir, task["library"]))
    if os.path.exists(library):
        return library
    if os.path.exists(os.path.join(export_dir, "build.sh")):
        command = ["bash", "build.sh"]
    else:
        # The evaluator's flags (evaluator/compile/nvcc_compiler.cc) for the task's archs, e.g. sm_90a.
        nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
        major, minor = torch.cuda.get_device_capability()
        gencode = []
        for arch in task["arch"] or [f"sm_{major}{minor}"]:
            digits = arch[3:]
            gencode += ["-gencode", f"arch=compute_{digits},code=sm_{digits}"]
        command = [nvcc, "-std=c++17", "-O3", "-shared", "-Xcompiler", "-fPIC", "-Xcompiler", "-fvisibility=hidden",
                   "-lineinfo", "-I", package_dir, *gencode, "-o", library,
                   os.path.join(export_dir, task["name"] + ".cu"), "-lcublas", "-lcublasLt"]
    print(f"# building {library}: {' '.join(command)}", flush=True)
    subprocess.run(command, cwd=export_dir, check=True)
    if not os.path.exists(library):
        sys.exit(f"torch_timings: {' '.join(command)} did not make {library} (kernels.json names it)")
    return library


def random_weight(pkg, task, generator):
    rows, cols, p = task["rows"], task["cols"], task["pattern"]
    family, wp = p["family"], pkg.weight_pattern
    rand = lambda *shape: torch.rand(*shape, generator=generator)

    def kept(*shape):  # exactly round((1 - sparsity) * count) units kept, as the search's generator does
        count = 1
        for d in shape:
            count *= d
        chosen = torch.zeros(count, dtype=torch.bool)
        chosen[torch.randperm(count, generator=generator)[:round((1 - p["sparsity"]) * count)]] = True
        return chosen.view(*shape)

    if family == "n_m":
        n, m = p["n"], p["m"]
        groups = (cols + m - 1) // m
        scores = rand(rows, groups * m)
        scores[:, cols:] = -1  # the last group's missing columns are never picked
        top = scores.view(rows, groups, m).topk(n, dim=-1).indices
        mask = torch.zeros(rows, groups, m, dtype=torch.bool).scatter_(-1, top, True).view(rows, -1)[:, :cols]
    elif family == "unstructured":
        mask = kept(rows, cols)
    elif family == "block":
        br, bc = p["block_rows"], p["block_cols"]
        mask = kept((rows + br - 1) // br, (cols + bc - 1) // bc)
        mask = mask.repeat_interleave(br, 0).repeat_interleave(bc, 1)[:rows, :cols]
    elif family == "row_sparse":
        mask = kept(rows, 1).expand(rows, cols)
    elif family == "column_sparse":
        mask = kept(1, cols).expand(rows, cols)
    elif family == "banded":
        mask = wp._band_mask(rows, cols, p["half_bandwidth"])
    elif family == "block_diagonal":
        mask = wp._block_diagonal_mask(rows, cols, p["num_blocks"])
    elif family == "dense":
        mask = torch.ones(rows, cols, dtype=torch.bool)
    else:
        return None  # a matrix file: its pattern is the file's, not made here
    sign = torch.where(rand(rows, cols) < 0.5, -1.0, 1.0)
    values = (rand(rows, cols) * 0.9 + 0.1) * sign  # kept entries stay nonzero in every dtype
    return (values * mask).to(pkg.weight_pattern.DTYPES[task["dtype"]][0]).cuda()


class Pattern(ctypes.Structure):  # sd_pattern of kernel_abi/sparseditto_kernel.h
    _fields_ = [("family", ctypes.c_int32), ("sparsity", ctypes.c_float), ("block_rows", ctypes.c_int32),
                ("block_cols", ctypes.c_int32), ("n", ctypes.c_int32), ("m", ctypes.c_int32),
                ("half_bandwidth", ctypes.c_int32), ("num_blocks", ctypes.c_int32)]


class Problem(ctypes.Structure):  # sd_problem
    _fields_ = [("abi_version", ctypes.c_int32), ("dtype", ctypes.c_int32), ("rows", ctypes.c_int64),
                ("cols", ctypes.c_int64), ("nnz", ctypes.c_int64), ("pattern", Pattern),
                ("row_offsets", ctypes.c_void_p), ("col_indices", ctypes.c_void_p), ("values", ctypes.c_void_p),
                ("n_values", ctypes.c_void_p), ("num_n_values", ctypes.c_int32), ("device", ctypes.c_int32),
                ("layout", ctypes.c_int32)]


class RawKernel:
    """The exported kernel called through its ABI with no torch in between (the "kernel" column)."""

    def __init__(self, pkg, task, library, weight, n_values):
        lib = ctypes.CDLL(library)
        prefix = task["symbol_prefix"]
        self.run_fn = getattr(lib, prefix + "run")
        self.run_fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p]
        self.release_fn = getattr(lib, prefix + "release")
        self.release_fn.argtypes = [ctypes.c_void_p]
        prepare = getattr(lib, prefix + "prepare")
        prepare.argtypes = [ctypes.POINTER(Problem), ctypes.POINTER(ctypes.c_void_p), ctypes.c_char_p, ctypes.c_size_t]
        ro, ci, va = pkg.weight_pattern.check_and_compress(weight, task)
        ns = (ctypes.c_int64 * len(n_values))(*n_values)
        p = task["pattern"]
        pattern = Pattern(pkg.weight_pattern.FAMILY_IDS[p["family"]], p.get("sparsity", 0), p.get("block_rows", 0),
                          p.get("block_cols", 0), p.get("n", 0), p.get("m", 0), p.get("half_bandwidth", 0),
                          p.get("num_blocks", 0))
        problem = Problem(1, pkg.weight_pattern.DTYPES[task["dtype"]][1], task["rows"], task["cols"], va.numel(),
                          pattern, ro.data_ptr(), ci.data_ptr(), va.data_ptr(), ctypes.cast(ns, ctypes.c_void_p),
                          len(n_values), torch.cuda.current_device(), pkg.LAYOUTS[task.get("layout", "kn")])
        self.state = ctypes.c_void_p()
        error = ctypes.create_string_buffer(1024)
        if prepare(ctypes.byref(problem), ctypes.byref(self.state), error, 1023) != 0:
            raise RuntimeError(f"{prefix}prepare: {error.value.decode(errors='replace')}")

    def run(self, b, c, n):
        rc = self.run_fn(self.state, b.data_ptr(), c.data_ptr(), n, torch.cuda.current_stream().cuda_stream)
        if rc != 0:
            raise RuntimeError(f"run returned {rc} at n = {n}")

    def close(self):
        self.release_fn(self.state)


def time_calls(fn, warmup, reps):
    """Median and 10th/90th percentile, in microseconds, of `reps` calls each between two CUDA events."""
    for _ in range(warmup):
        fn()
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(reps)]
    torch.cuda.synchronize()
    for start, end in events:
        start.record()
        fn()
        end.record()
    torch.cuda.synchronize()
    times = sorted(start.elapsed_time(end) * 1000 for start, end in events)
    pick = lambda q: times[min(len(times) - 1, int(q * len(times)))]
    return pick(0.5), pick(0.1), pick(0.9)


def reason(e):
    return f"{type(e).__name__}: {(str(e).splitlines() or [''])[0][:80]}"


def graphed(fn):
    """fn captured in a CUDA graph (warmed up on a side stream first, as torch.cuda.graph asks): the
    graph's replay and the captured output; or a reason string and None when capture fails."""
    try:
        return _capture(fn)
    except Exception as e:  # noqa: BLE001 - a kernel that cannot be captured is a finding, not a crash
        torch.cuda.synchronize()
        return f"capture failed ({reason(e)})", None


def _capture(fn):
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = fn()
    return graph.replay, out


def rel_error(y, ref):
    return float((y.float() - ref).abs().max() / ref.abs().max().clamp(min=1e-30))


def torch_paths(weight, x, task):
    """The torch sparse paths a user reaches for: name -> a zero-argument call, or a reason string."""
    paths = {}
    try:
        csr = weight.to_sparse_csr()
        xt = x.t()
        (csr @ xt).t()
        paths["torch CSR"] = lambda: (csr @ xt).t()
    except Exception as e:  # noqa: BLE001 - the reason is the table's cell
        paths["torch CSR"] = f"n/a ({reason(e)})"
    p = task["pattern"]
    if p["family"] != "n_m" or (p["n"], p["m"]) != (2, 4):
        paths["torch 2:4"] = "n/a (not 2:4)"
    else:
        try:
            from torch.sparse import to_sparse_semi_structured
            semi = to_sparse_semi_structured(weight)
            F.linear(x, semi)
            paths["torch 2:4"] = lambda: F.linear(x, semi)
        except Exception as e:  # noqa: BLE001
            paths["torch 2:4"] = f"n/a ({reason(e)})"
    return paths


def check(label, err, tolerance, failures):
    ok = err <= tolerance
    print(f"#   {label}: max rel error {err:.2e} {'ok' if ok else f'FAILED (tolerance {tolerance:.0e})'}")
    if not ok:
        failures.append(label)


def run_task(pkg, package_dir, args, task, failures):
    rows, cols, name = task["rows"], task["cols"], task["name"]
    generator = torch.Generator().manual_seed(args.seed)
    weight = random_weight(pkg, task, generator)
    if weight is None:
        print(f"# {name}: skipped (a task over a matrix file: give its weight yourself)")
        return []
    library = build_library(args.export_dir, package_dir, task)
    n_values = sorted(set(task["n_values"]) | set(args.n))
    linear = torch.nn.Linear(cols, rows, bias=False, device="cuda", dtype=weight.dtype)
    with torch.no_grad():
        linear.weight.copy_(weight)
    start = time.time()
    layer = pkg.SparseLinear.from_linear(linear, task=name, n_values=n_values)
    nk = task.get("layout", "kn") == "nk"
    spmm = torch.ops.sparseditto.spmm_nk if nk else torch.ops.sparseditto.spmm
    print(f"# {name}: {rows} x {cols} {task['dtype']} {task['pattern']['family']}, layout {task.get('layout', 'kn')}, density "
          f"{float((weight != 0).float().mean()):.3f}; from_linear (operators built or loaded, kernel prepared) "
          f"{time.time() - start:.1f} s", flush=True)
    raw = RawKernel(pkg, task, library, weight, n_values)
    tolerance = 1e-2 if task["dtype"] != "fp32" else 1e-4
    lines = []
    for n in args.n:
        x = torch.randn(n, cols, device="cuda", generator=torch.Generator("cuda").manual_seed(args.seed + n)
                        ).to(weight.dtype)
        ref = F.linear(x.float(), weight.float())
        op = lambda: spmm(x, layer.handle, rows)
        if nk:  # the kernel reads X and writes Y [n x M] as they are
            b, c = x, torch.empty(n, rows, device="cuda", dtype=weight.dtype)
        else:
            b, c = x.t().contiguous(), torch.empty(rows, n, device="cuda", dtype=weight.dtype)
        raw.run(b, c, n)
        op_graph, op_graph_out = graphed(op)
        layer_graph, layer_graph_out = graphed(lambda: layer(x))
        dense_graph, _ = graphed(lambda: F.linear(x, weight))
        print(f"# {name} n={n}:")
        check("kernel (ctypes) vs F.linear fp32", rel_error(c if nk else c.t(), ref), tolerance, failures)
        check("op vs F.linear fp32", rel_error(op(), ref), tolerance, failures)
        for label, graph, out in [("op in a CUDA graph", op_graph, op_graph_out),
                                  ("SparseLinear in a CUDA graph", layer_graph, layer_graph_out)]:
            if out is None:
                print(f"#   {label}: {graph}")
                failures.append(label)
                continue
            out.fill_(float("nan"))
            graph()
            torch.cuda.synchronize()
            check(label, rel_error(out, ref), tolerance, failures)
        check("dense F.linear itself", rel_error(F.linear(x, weight), ref), tolerance, failures)
        columns = {"kernel": lambda: raw.run(b, c, n), "op": op, "op graph": op_graph,
                   "F.linear": lambda: F.linear(x, weight), "F.linear graph": dense_graph}
        columns.update(torch_paths(weight, x, task))
        cells = {}
        for label, fn in columns.items():
            cells[label] = fn if isinstance(fn, str) else time_calls(fn, args.warmup, args.reps)
        lines.append((f"{name} ({'nk' if nk else 'kn'})", n, cells))
    # Dispatch: an n outside the prepared ones runs F.linear (other_n="dense").
    other = max(n_values) + 1
    x = torch.randn(other, cols, device="cuda", dtype=weight.dtype)
    check(f"SparseLinear at n={other} (not prepared: F.linear fallback)",
          rel_error(layer(x), F.linear(x.float(), weight.float())), tolerance, failures)
    if hasattr(torch.library, "opcheck"):
        x = torch.randn(args.n[0], cols, device="cuda", dtype=weight.dtype)
        try:
            torch.library.opcheck(spmm.default, (x, layer.handle, rows))
            print(f"#   torch.library.opcheck({spmm.default}): passed")
        except Exception as e:  # noqa: BLE001
            print(f"#   torch.library.opcheck({spmm.default}): FAILED: {str(e).splitlines()[0]}")
            failures.append("opcheck")
    else:
        print(f"#   torch.library.opcheck: not in torch {torch.__version__}")
    if args.compile:
        compiled = torch.compile(layer)
        x = torch.randn(args.n[0], cols, device="cuda", dtype=weight.dtype)
        check("torch.compile(SparseLinear)", rel_error(compiled(x), F.linear(x.float(), weight.float())), tolerance,
              failures)
    raw.close()
    return lines


def print_table(lines):
    labels = ["kernel", "op", "op graph", "F.linear", "F.linear graph", "torch CSR", "torch 2:4"]
    print("\n| task | n | " + " | ".join(labels) + " | op graph / kernel |")
    print("|---|---|" + "---|" * len(labels) + "---|")
    for name, n, cells in lines:
        row = []
        for label in labels:
            cell = cells.get(label, "n/a")
            row.append(cell if isinstance(cell, str) else f"{cell[0]:.1f} ({cell[1]:.1f}-{cell[2]:.1f})")
        graph, kernel = cells["op graph"], cells["kernel"]
        ratio = "n/a" if isinstance(graph, str) else f"{graph[0] / kernel[0]:.2f}"
        print(f"| {name} | {n} | " + " | ".join(row) + f" | {ratio} |")
    print("\nTimes in µs: median (10th-90th percentile) of calls timed each by CUDA events, back to back.")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("export_dir")
    parser.add_argument("--tasks", help="comma-separated task names (default: every task of the package)")
    parser.add_argument("--n", default="16,2048", help="batch sizes (rows of x), default 16,2048")
    parser.add_argument("--reps", type=int, default=100)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--compile", action="store_true", help="also check torch.compile(SparseLinear) once")
    args = parser.parse_args()
    args.n = [int(v) for v in args.n.split(",")]
    if not torch.cuda.is_available():
        sys.exit(f"torch_timings: torch {torch.__version__} sees no CUDA device")
    pkg, package_dir = find_package(args.export_dir)
    names = args.tasks.split(",") if args.tasks else sorted(pkg.TASKS)
    unknown = [t for t in names if t not in pkg.TASKS]
    if unknown:
        sys.exit(f"torch_timings: no task {unknown} in {package_dir}; its tasks: {sorted(pkg.TASKS)}")
    print(f"# torch {torch.__version__}, CUDA {torch.version.cuda}, {torch.cuda.get_device_name()}, "
          f"run {pkg.RUN}, {args.reps} timed calls after {args.warmup} warm-ups", flush=True)
    failures, lines = [], []
    for name in names:
        lines += run_task(pkg, package_dir, args, pkg.TASKS[name], failures)
    print_table(lines)
    if failures:
        print(f"FAILED: {', '.join(failures)}")
        sys.exit(1)


if __name__ == "__main__":
    main()
