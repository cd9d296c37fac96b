"""The PyTorch package's tests on a CPU-only torch (Debian's python3-torch 1.13; ctest torch_package_cpu_test).

Builds the package's operators against the installed torch (torch.utils.cpp_extension, in a temporary
folder), compiles a real seed kernel with nvcc into the library the package loads, and checks what a
machine without a GPU allows: the operators' registration and schemas, spmm's and spmm_nk's meta
shapes and their CPU errors, the layout a kernel's mask allows (a KN-only seed refused in NK, the
reference candidate, which serves both, taken), prepare's errors (library, symbols, a kernel refusing without a GPU), release of an unknown
handle, from_linear's pattern check and its errors, the CSR each family hands the kernel, and the
dispatch of batch sizes. Exits 77 (skipped) when python3 has no torch.
"""

import argparse
import importlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

try:
    import torch
except ImportError:
    print("skipped: this python3 has no torch (Debian: apt-get install python3-torch libtorch-dev)")
    sys.exit(77)

ARGS = None
PKG = None  # the imported package
TMP = None


def task(name, rows, cols, dtype, family, n_values=(4, 16), **pattern):
    return {"name": name, "rows": rows, "cols": cols, "dtype": dtype, "pattern": dict(family=family, **pattern),
            "n_values": list(n_values), "arch": ["sm_80"], "library": "../libkernel.so", "symbol_prefix": "sparseditto_"}


TASKS = [
    task("nm24", 8, 16, "fp16", "n_m", n=2, m=4),
    task("unstr", 16, 32, "fp32", "unstructured", sparsity=0.75),
    task("blocks", 8, 12, "fp16", "block", sparsity=0.5, block_rows=2, block_cols=4),
    task("band", 6, 6, "fp16", "banded", half_bandwidth=1),
    task("diag", 6, 9, "fp16", "block_diagonal", num_blocks=3),
    task("rows", 4, 5, "fp16", "row_sparse", sparsity=0.5),
    task("cols", 4, 5, "fp16", "column_sparse", sparsity=0.4),
    task("full", 3, 4, "bf16", "dense"),
    dict(task("nk24", 8, 20, "fp16", "n_m", n=2, m=4), layout="nk", library="../libkernel_nk.so"),
]


def setUpModule():
    global PKG, TMP
    TMP = tempfile.mkdtemp(prefix="torch_package_cpu_test.")
    os.environ["TORCH_EXTENSIONS_DIR"] = os.path.join(TMP, "extensions")
    pkg_dir = os.path.join(TMP, "packages", "sparseditto_t")
    shutil.copytree(ARGS.template, pkg_dir)
    shutil.copy(os.path.join(ARGS.abi, "sparseditto_kernel.h"), pkg_dir)
    with open(os.path.join(pkg_dir, "kernels.json"), "w") as f:
        json.dump({"format": 1, "run": "t", "abi_version": 1, "tasks": TASKS}, f)
    for source, library in [(ARGS.seed, "libkernel.so"), (ARGS.nk_kernel, "libkernel_nk.so")]:
        subprocess.run([ARGS.nvcc, "-O2", "-arch=sm_80", "-Xcompiler", "-fPIC", "-shared", "-I", ARGS.abi, "-o",
                        os.path.join(TMP, "packages", library), source], check=True)
    sys.path.insert(0, os.path.join(TMP, "packages"))
    PKG = importlib.import_module("sparseditto_t")
    PKG.load_op()


def tearDownModule():
    shutil.rmtree(TMP, ignore_errors=True)


def linear(weight, bias=True):
    layer = torch.nn.Linear(weight.shape[1], weight.shape[0], bias=bias, dtype=weight.dtype)
    with torch.no_grad():
        layer.weight.copy_(weight)
    return layer


def nm24_weight():
    w = torch.zeros(8, 16, dtype=torch.float16)
    w[:, 0::4] = 1.5
    w[:, 3::4] = -2.0
    return w


def densify(row_offsets, col_indices, values, rows, cols):
    dense = torch.zeros(rows, cols)
    for r in range(rows):
        for k in range(int(row_offsets[r]), int(row_offsets[r + 1])):
            dense[r, int(col_indices[k])] = values[k]
    return dense


class Operators(unittest.TestCase):
    def test_registered_with_their_schemas(self):
        for name, text in [("prepare", "sparseditto::prepare(str library, str symbol_prefix, int rows"),
                           ("release", "sparseditto::release(int handle) -> ()"),
                           ("prepare", "int device, int layout=0) -> int"),
                           ("spmm", "sparseditto::spmm(Tensor x, int handle, int out_features) -> Tensor"),
                           ("spmm_nk", "sparseditto::spmm_nk(Tensor x, int handle, int out_features) -> Tensor")]:
            op = getattr(torch.ops.sparseditto, name)
            self.assertIn(text, str(op.default._schema))

    def test_meta_output_is_the_transpose_of_an_m_by_n_c(self):
        for n, k, m in [(1, 16, 8), (16, 16, 8), (2048, 64, 32), (0, 16, 8)]:
            x = torch.empty(n, k, dtype=torch.float16, device="meta")
            y = torch.ops.sparseditto.spmm(x, 1, m)
            self.assertEqual(tuple(y.shape), (n, m))
            self.assertEqual(y.stride(), (1, max(n, 1)))  # an empty tensor's strides count 1
            self.assertEqual(y.dtype, torch.float16)
            self.assertEqual(y.device.type, "meta")

    def test_meta_output_of_spmm_nk_is_a_contiguous_n_by_m_y(self):
        for n, k, m in [(1, 16, 8), (16, 16, 8), (2048, 64, 32), (0, 16, 8)]:
            x = torch.empty(n, k, dtype=torch.float16, device="meta")
            y = torch.ops.sparseditto.spmm_nk(x, 1, m)
            self.assertEqual(tuple(y.shape), (n, m))
            self.assertEqual(y.stride(), (m, 1))
            self.assertTrue(y.is_contiguous())
            self.assertEqual(y.device.type, "meta")
        with self.assertRaisesRegex(RuntimeError, "x must be 2-D"):
            torch.ops.sparseditto.spmm_nk(torch.empty(2, 3, 4, device="meta"), 1, 8)
        with self.assertRaisesRegex(RuntimeError, "CUDA tensors only"):
            torch.ops.sparseditto.spmm_nk(torch.zeros(4, 16, dtype=torch.float16), 1, 8)

    def test_meta_refuses_what_the_kernel_would(self):
        with self.assertRaisesRegex(RuntimeError, "x must be 2-D"):
            torch.ops.sparseditto.spmm(torch.empty(2, 3, 4, device="meta"), 1, 8)
        with self.assertRaisesRegex(RuntimeError, "out_features must be positive"):
            torch.ops.sparseditto.spmm(torch.empty(2, 4, device="meta"), 1, 0)

    def test_spmm_on_the_cpu_says_it_needs_cuda(self):
        with self.assertRaisesRegex(RuntimeError, "CUDA tensors only"):
            torch.ops.sparseditto.spmm(torch.zeros(4, 16, dtype=torch.float16), 1, 8)

    def test_release_of_an_unknown_handle(self):
        with self.assertRaisesRegex(RuntimeError, "no prepared kernel with handle 987654"):
            torch.ops.sparseditto.release(987654)

    def prepare(self, library, prefix="sparseditto_", row_offsets=None, layout=0):
        ro, ci, va = PKG.weight_pattern.check_and_compress(nm24_weight(), PKG.TASKS["nm24"])
        return torch.ops.sparseditto.prepare(library, prefix, 8, 16, ro if row_offsets is None else row_offsets,
                                             ci, va, [4, 16], 2, [3, 0, 0, 2, 4, 0, 0], 0.5, 0, layout)

    def test_the_kernels_mask_decides_the_layouts_it_is_prepared_in(self):
        kn_only = os.path.join(TMP, "packages", "libkernel.so")  # csr_warp_per_row: no sparseditto_layouts
        both = os.path.join(TMP, "packages", "libkernel_nk.so")  # the reference candidate: KN and NK
        with self.assertRaisesRegex(RuntimeError, r"does not serve layout nk \(its sparseditto_layouts\(\) mask is 1"):
            self.prepare(kn_only, layout=1)
        for bad in (2, -1):
            with self.assertRaisesRegex(RuntimeError, f"layout {bad} is not an sd_layout"):
                self.prepare(both, layout=bad)
        # The mask allows NK: the reference's own prepare runs (and, with no GPU, fails in CUDA).
        try:
            handle = self.prepare(both, layout=1)
        except RuntimeError as e:
            self.assertIn("refused the weight:", str(e))
        else:
            torch.ops.sparseditto.release(handle)

    def test_prepare_errors_name_the_library_and_symbol(self):
        library = os.path.join(TMP, "packages", "libkernel.so")
        with self.assertRaisesRegex(RuntimeError, "cannot load .*missing.so"):
            self.prepare(os.path.join(TMP, "missing.so"))
        with self.assertRaisesRegex(RuntimeError, "has no symbol nm24_prepare .*symbol prefix"):
            self.prepare(library, prefix="nm24_")
        with self.assertRaisesRegex(RuntimeError, "row_offsets has 3 entries, expected 9"):
            self.prepare(library, row_offsets=torch.zeros(3, dtype=torch.int32))

    def test_prepare_calls_the_real_kernel(self):
        # No GPU here: the seed's prepare fails in CUDA and its reason comes back; with one it succeeds.
        try:
            handle = self.prepare(os.path.join(TMP, "packages", "libkernel.so"))
        except RuntimeError as e:
            self.assertIn("refused the weight:", str(e))
            self.assertNotIn("(no reason given)", str(e))
        else:
            self.assertGreater(handle, 0)
            torch.ops.sparseditto.release(handle)


class BuildWithoutNinja(unittest.TestCase):
    def test_one_compiler_command_builds_the_same_operators(self):
        folder = os.path.join(TMP, "direct")
        script = ("import sys, torch; sys.path.insert(0, sys.argv[1]); import sparseditto_t as p; p.load_op(); "
                  "print(tuple(torch.ops.sparseditto.spmm(torch.empty(3, 16, device='meta'), 1, 8).shape))")
        env = dict(os.environ, TORCH_EXTENSIONS_DIR=folder, SPARSEDITTO_TORCH_BUILD="direct")
        run = subprocess.run([sys.executable, "-c", script, os.path.join(TMP, "packages")], env=env,
                             capture_output=True, text=True)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(run.stdout.strip(), "(3, 8)")
        self.assertTrue(any(f.startswith("sparseditto_torch_op_") and f.endswith(".so") for f in os.listdir(folder)))


class FromLinear(unittest.TestCase):
    def assertPatternError(self, weight, message, **kwargs):
        with self.assertRaises(PKG.PatternError) as caught:
            PKG.SparseLinear.from_linear(linear(weight), **kwargs)
        self.assertIn(message, str(caught.exception))

    def test_errors_name_what_differs(self):
        three = nm24_weight()
        three[5, 9] = 1.0  # row 5, group 2 (columns 8..11) now holds 3
        stray_band = torch.zeros(6, 6, dtype=torch.float16)
        stray_band[0, 4] = 1.0
        stray_diag = torch.zeros(6, 9, dtype=torch.float16)
        stray_diag[2, 3] = 1.0  # row 2 is in block 1 (rows 2..3, columns 3..5): allowed
        stray_diag[4, 0] = 1.0  # row 4 is in block 2: not allowed
        dense_unstr = torch.ones(16, 32)
        cases = [
            (three, "nm24", "row 5, columns 8..11: 3 nonzeros, the 2:4 pattern allows 2"),
            (nm24_weight().float(), "nm24", "the weight is torch.float32, task nm24 was searched for fp16"),
            (torch.zeros(8, 15, dtype=torch.float16), "nm24", "the weight is 8 x 15 (out x in features); task nm24 was searched for 8 x 16"),
            (stray_band, "band", "row 0 has a nonzero at column 4, outside the band of half bandwidth 1"),
            (stray_diag, "diag", "row 4 has a nonzero at column 0, outside the 3 diagonal blocks"),
            (dense_unstr, "unstr", "0.0% of the weight's entries are zero (counted in unstructured units), task unstr declared 75.0%"),
        ]
        for weight, name, message in cases:
            with self.subTest(name=name, message=message):
                self.assertPatternError(weight, message, task=name)

    def test_task_lookup(self):
        self.assertPatternError(torch.zeros(7, 7, dtype=torch.float16), "no tasks of run t match a 7 x 7 weight")
        with self.assertRaisesRegex(KeyError, "run t has no task 'nope'"):
            PKG.SparseLinear.from_linear(linear(nm24_weight()), task="nope")
        with self.assertRaisesRegex(TypeError, "takes an nn.Linear"):
            PKG.SparseLinear.from_linear(torch.nn.Conv1d(1, 1, 1))
        with self.assertRaisesRegex(ValueError, "other_n is 'dense' or 'error'"):
            PKG.SparseLinear.from_linear(linear(nm24_weight()), other_n="maybe")
        with self.assertRaisesRegex(ValueError, "n_values must be positive integers"):
            PKG.SparseLinear.from_linear(linear(nm24_weight()), n_values=[0, 16])

    def test_a_right_weight_on_the_cpu_is_refused_for_its_device(self):
        # The pattern check passed (shape found the task, 2:4 holds), then the device is named.
        with self.assertRaisesRegex(ValueError, "the weight is on cpu; the kernels run on CUDA devices"):
            PKG.SparseLinear.from_linear(linear(nm24_weight()))
        sparse_enough = torch.zeros(16, 32)
        sparse_enough[:, :8] = 3.0  # 75% zeros
        with self.assertRaisesRegex(ValueError, "CUDA devices"):
            PKG.SparseLinear.from_linear(linear(sparse_enough), task="unstr")
        with self.assertRaisesRegex(ValueError, "CUDA devices"):  # too dense, accepted when asked
            PKG.SparseLinear.from_linear(linear(torch.ones(16, 32)), task="unstr", check_sparsity=False)


class Compression(unittest.TestCase):
    def check(self, name, weight, want_counts):
        spec = PKG.TASKS[name]
        ro, ci, va = PKG.weight_pattern.check_and_compress(weight, spec)
        self.assertEqual((ro.dtype, ci.dtype, va.dtype), (torch.int32, torch.int32, torch.float32))
        self.assertEqual([int(ro[r + 1] - ro[r]) for r in range(spec["rows"])], want_counts)
        self.assertTrue(torch.equal(densify(ro, ci, va, spec["rows"], spec["cols"]), weight.float()))
        for r in range(spec["rows"]):  # canonical: strictly increasing columns in each row
            row = ci[int(ro[r]):int(ro[r + 1])]
            self.assertTrue(bool((row[1:] > row[:-1]).all()))

    def test_each_family_hands_its_units_whole(self):
        nm = nm24_weight()
        nm[2, 3] = 0  # group 0 of row 2 keeps one nonzero: padded with an explicit zero to 2
        blocks = torch.zeros(8, 12, dtype=torch.float16)
        blocks[0, 5] = 1.0  # block (0, 1): rows 0..1, columns 4..7, stored whole
        blocks[7, 11] = 2.0  # block (3, 2)
        band = torch.zeros(6, 6, dtype=torch.float16)
        band[3, 3] = 4.0
        rows = torch.zeros(4, 5, dtype=torch.float16)
        rows[1, 2] = 1.0
        cols = torch.zeros(4, 5, dtype=torch.float16)
        cols[0, 1] = 1.0
        cols[3, 4] = 1.0
        for name, weight, counts in [
            ("nm24", nm, [8] * 8),
            ("blocks", blocks, [4, 4, 0, 0, 0, 0, 4, 4]),
            ("band", band, [2, 3, 3, 3, 3, 2]),
            ("diag", torch.zeros(6, 9, dtype=torch.float16), [3] * 6),
            ("rows", rows, [0, 5, 0, 0]),
            ("cols", cols, [2] * 4),
            ("full", torch.zeros(3, 4, dtype=torch.bfloat16), [4] * 3),
        ]:
            with self.subTest(name=name):
                self.check(name, weight, counts)


class KernelsJson(unittest.TestCase):
    def test_a_broken_file_is_named_with_its_field(self):
        good = {"format": 1, "run": "t", "tasks": [dict(TASKS[0])]}
        missing_rows = {"format": 1, "run": "t", "tasks": [{k: v for k, v in TASKS[0].items() if k != "rows"}]}
        bad_family = {"format": 1, "run": "t", "tasks": [dict(TASKS[0], pattern={"family": "spiral"})]}
        bad_layout = {"format": 1, "run": "t", "tasks": [dict(TASKS[0], layout="mn")]}
        for text, message in [
            (json.dumps(good), None),
            ("{not json", "cannot read"),
            (json.dumps({"format": 2, "run": "t", "tasks": []}), "not a kernels.json of format 1"),
            (json.dumps({"format": 1, "run": "t", "tasks": []}), "tasks must be a non-empty list"),
            (json.dumps(missing_rows), "tasks[0].rows is missing or not of type int"),
            (json.dumps(bad_family), "unknown dtype 'fp16' or pattern family 'spiral'"),
            (json.dumps(bad_layout), "tasks[0] (nm24): unknown layout 'mn' (kn or nk)"),
        ]:
            path = os.path.join(TMP, "kernels_case.json")
            with open(path, "w") as f:
                f.write(text)
            with self.subTest(message=message):
                if message is None:
                    self.assertEqual(PKG.read_kernels_json(path)[0], "t")
                    continue
                with self.assertRaises(ValueError) as caught:
                    PKG.read_kernels_json(path)
                self.assertIn(message, str(caught.exception))
                self.assertIn(path, str(caught.exception))


class Layouts(unittest.TestCase):
    def test_kernels_json_names_each_kernels_layout(self):
        self.assertEqual(PKG.TASKS["nk24"]["layout"], "nk")
        self.assertEqual(PKG.TASKS["nm24"]["layout"], "kn")  # absent: kn, as packages before layouts

    def test_an_nk_task_checks_its_weight_like_any_other(self):
        w = torch.zeros(8, 20, dtype=torch.float16)
        w[:, 1::4] = 1.0
        with self.assertRaisesRegex(ValueError, "CUDA devices"):  # pattern passed; then the device
            PKG.SparseLinear.from_linear(linear(w))
        w[0, 2] = 1.0
        w[0, 3] = 1.0
        with self.assertRaisesRegex(PKG.PatternError, "row 0, columns 0..3: 3 nonzeros"):
            PKG.SparseLinear.from_linear(linear(w))


class Dispatch(unittest.TestCase):
    def test_batch_sizes(self):
        prepared = frozenset([16, 2048])
        for n, other_n, want in [(16, "dense", "kernel"), (2048, "error", "kernel"), (0, "error", "empty"),
                                 (17, "dense", "dense"), (1, "dense", "dense")]:
            self.assertEqual(PKG.kernel_dispatch(n, prepared, other_n), want, (n, other_n))
        with self.assertRaisesRegex(ValueError, r"n = 17 rows is not among .*\[16, 2048\].*other_n='dense'"):
            PKG.kernel_dispatch(17, prepared, "error")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--template", required=True)
    parser.add_argument("--abi", required=True)
    parser.add_argument("--seed", required=True)
    parser.add_argument("--nk-kernel", required=True)
    parser.add_argument("--nvcc", required=True)
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
