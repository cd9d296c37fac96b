"""SparseDitto kernels of one search run for PyTorch (written by `sparseditto export RUN --torch`).

    import sys; sys.path.insert(0, "runs/<run>/export/torch")
    import sparseditto_<run> as sd
    layer = sd.SparseLinear.from_linear(linear)       # checks the weight, prepares the kernel once
    y = layer(x)                                       # x [..., in_features] on the kernel's GPU

kernels.json (beside this file) lists the run's tasks: shape, dtype, pattern, the n values the
search covered, the activation layout the kernel was searched in ("kn", or "nk": PyTorch's own
X [n x K] in and Y [n x M] out, so the op copies nothing), and where each kernel's shared library
and entry points are. The operators live in
sparseditto_op.cpp, compiled on first use (load_op, which from_linear calls) with torch.utils.cpp_extension (a C++ compiler, and ninja
where present; cached under $TORCH_EXTENSIONS_DIR; SPARSEDITTO_TORCH_BUILD=direct skips ninja) and shared by every such package loaded in one process:
    torch.ops.sparseditto.prepare / release / spmm / spmm_nk   (see sparseditto_op.cpp)
spmm and spmm_nk have fake (meta) functions, so torch.compile traces them; inference only (no backward).
"""

import json
import os
import threading
import weakref

import torch
import torch.nn.functional as F

from .weight_pattern import DTYPES, FAMILY_IDS, PatternError, check_and_compress

__all__ = ["SparseLinear", "PatternError", "TASKS", "RUN", "load_op", "kernel_dispatch", "read_kernels_json"]

_HERE = os.path.dirname(os.path.abspath(__file__))
_TASK_FIELDS = {"name": str, "rows": int, "cols": int, "dtype": str, "pattern": dict, "n_values": list,
                "library": str, "symbol_prefix": str}
LAYOUTS = {"kn": 0, "nk": 1}  # kernels.json's "layout" (absent: kn, as packages before it) -> sd_layout


def read_kernels_json(path):
    """(run, {task name: task}) from a package's kernels.json; ValueError naming the file and field."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise ValueError(f"sparseditto: cannot read {path}: {e}") from None
    if not isinstance(doc, dict) or doc.get("format") != 1 or not isinstance(doc.get("run"), str):
        raise ValueError(f"sparseditto: {path}: not a kernels.json of format 1 (an object with format 1, run, tasks)")
    tasks = doc.get("tasks")
    if not isinstance(tasks, list) or not tasks:
        raise ValueError(f"sparseditto: {path}: tasks must be a non-empty list")
    for i, task in enumerate(tasks):
        for field, kind in _TASK_FIELDS.items():
            if not isinstance(task, dict) or not isinstance(task.get(field), kind):
                raise ValueError(f"sparseditto: {path}: tasks[{i}].{field} is missing or not of type {kind.__name__}")
        if task["dtype"] not in DTYPES or task["pattern"].get("family") not in FAMILY_IDS:
            raise ValueError(f"sparseditto: {path}: tasks[{i}] ({task['name']}): unknown dtype {task['dtype']!r} or "
                             f"pattern family {task['pattern'].get('family')!r}")
        task.setdefault("layout", "kn")
        if task["layout"] not in LAYOUTS:
            raise ValueError(f"sparseditto: {path}: tasks[{i}] ({task['name']}): unknown layout {task['layout']!r} "
                             f"(kn or nk)")
    return doc["run"], {t["name"]: t for t in tasks}


RUN, TASKS = read_kernels_json(os.path.join(_HERE, "kernels.json"))

_load_lock = threading.Lock()
_register_fake = getattr(torch.library, "register_fake", None) or getattr(torch.library, "impl_abstract", None)


def _op_loaded():
    try:
        torch.ops.sparseditto.spmm
    except (AttributeError, RuntimeError):
        return False
    try:
        torch.ops.sparseditto.spmm_nk
    except (AttributeError, RuntimeError):
        raise RuntimeError("sparseditto: this process already loaded the operators of an older package (no "
                           "spmm_nk); import this package in a fresh process") from None
    return True


def _spmm_fake(x, handle, out_features):
    # Shapes and strides of the real kernel's output: the transpose of an M x n row-major C.
    return x.new_empty((out_features, x.shape[0])).t()


def _spmm_nk_fake(x, handle, out_features):
    # NK: the kernel writes Y [n x M] row-major, a contiguous tensor.
    return x.new_empty((x.shape[0], out_features))


def _torch_paths(fn, cuda):
    try:
        return fn(device_type="cuda" if cuda else "cpu")  # torch >= 2.6
    except TypeError:
        return fn(cuda=cuda)


def _build_without_ninja(source, flags, includes, with_cuda, verbose):
    """What cpp_extension.load does, as one compiler command (for machines without ninja); cached
    under $TORCH_EXTENSIONS_DIR by a digest of the command and the source."""
    import hashlib
    import subprocess

    from torch.utils import cpp_extension

    libs = ["-lc10", "-ltorch", "-ltorch_cpu"] + (["-lc10_cuda", "-ltorch_cuda", "-lcudart"] if with_cuda else [])
    lib_dirs = _torch_paths(cpp_extension.library_paths, with_cuda)
    command = [os.environ.get("CXX", "c++"), "-shared", "-fPIC", "-DTORCH_API_INCLUDE_EXTENSION_H",
               f"-D_GLIBCXX_USE_CXX11_ABI={int(torch._C._GLIBCXX_USE_CXX11_ABI)}", *flags,
               *("-I" + i for i in includes + _torch_paths(cpp_extension.include_paths, with_cuda)), source,
               *("-L" + d for d in lib_dirs), *("-Wl,-rpath," + d for d in lib_dirs), *libs]
    with open(source, "rb") as f:
        digest = hashlib.sha256(f.read() + "\0".join(command).encode()).hexdigest()[:16]
    folder = os.environ.get("TORCH_EXTENSIONS_DIR", os.path.expanduser("~/.cache/torch_extensions"))
    os.makedirs(folder, exist_ok=True)
    library = os.path.join(folder, f"sparseditto_torch_op_{digest}.so")
    if not os.path.exists(library):
        partial = f"{library}.{os.getpid()}.tmp"
        run = subprocess.run(command + ["-o", partial], capture_output=not verbose, text=True)
        if run.returncode != 0:
            raise RuntimeError(f"sparseditto: building the operators failed:\n{' '.join(command)}\n{run.stderr}")
        os.replace(partial, library)
    torch.ops.load_library(library)


def load_op(verbose=False):
    """Compiles (once, cached) and loads the sparseditto operators unless this process has them.

    Needs a C++ compiler and cuda_runtime_api.h (CUDA_HOME; torch's CUDA build has it); with ninja
    torch.utils.cpp_extension builds them, without it one compiler command does (same flags).
    Raises RuntimeError when the build fails (the compiler's output).
    """
    with _load_lock:
        if _op_loaded():
            return
        from torch.utils import cpp_extension

        with_cuda = torch.version.cuda is not None
        flags = ["-O2", "-std=c++17"]
        if with_cuda:
            flags.append("-DSPARSEDITTO_WITH_CUDA")
        if _register_fake is None:
            flags.append("-DSPARSEDITTO_CPP_META")  # torch without register_fake: a C++ Meta kernel
        includes = [_HERE]
        if not with_cuda:
            if cpp_extension.CUDA_HOME is None:
                raise RuntimeError("sparseditto: the operators need cuda_runtime_api.h; set CUDA_HOME to a CUDA toolkit")
            includes.append(os.path.join(cpp_extension.CUDA_HOME, "include"))
        source = os.path.join(_HERE, "sparseditto_op.cpp")
        if cpp_extension.is_ninja_available() and os.environ.get("SPARSEDITTO_TORCH_BUILD") != "direct":
            cpp_extension.load(name="sparseditto_torch_op", sources=[source], extra_cflags=flags,
                               extra_include_paths=includes, with_cuda=with_cuda, is_python_module=False,
                               verbose=verbose)
        else:
            _build_without_ninja(source, flags, includes, with_cuda, verbose)
        if _register_fake is not None:
            _register_fake("sparseditto::spmm")(_spmm_fake)
            _register_fake("sparseditto::spmm_nk")(_spmm_nk_fake)


def kernel_dispatch(n, n_values, other_n):
    """Where a batch of n rows goes: "kernel" when n is one of `n_values` (the n the kernel was prepared
    for), "empty" for n == 0, else "dense" (F.linear on the kept weight) when other_n == "dense";
    raises ValueError when other_n == "error"."""
    if n == 0:
        return "empty"
    if n in n_values:
        return "kernel"
    if other_n == "dense":
        return "dense"
    raise ValueError(f"sparseditto: a batch of n = {n} rows is not among the n values the kernel was prepared for "
                     f"({sorted(n_values)}); pass n_values=[...] to from_linear, or other_n='dense' to run F.linear")


def _task_for(weight, task):
    if task is not None:
        if task not in TASKS:
            raise KeyError(f"sparseditto: run {RUN} has no task {task!r}; its tasks: {sorted(TASKS)}")
        return TASKS[task]
    shape = tuple(weight.shape)
    matching = [t for t in TASKS.values() if (t["rows"], t["cols"]) == shape]
    if len(matching) != 1:
        listed = ", ".join(f"{t['name']} ({t['rows']} x {t['cols']})" for t in TASKS.values())
        raise PatternError(f"{'no' if not matching else 'several'} tasks of run {RUN} match a {shape[0]} x {shape[1]} "
                           f"weight; name one with task=...: {listed}")
    return matching[0]


def _library_path(task, library):
    path = library if library is not None else os.path.join(_HERE, task["library"])
    if not os.path.exists(path):
        raise FileNotFoundError(
            f"sparseditto: the kernel library of task {task['name']} is not at {path}: build the export "
            f"(its build script, or nvcc as the .cu's header says), or pass library=...")
    return os.path.abspath(path)


class SparseLinear(torch.nn.Module):
    """y = x W^T + b by a SparseDitto kernel prepared once for W (use from_linear).

    forward takes x [..., in_features] in the kernel's dtype on its GPU. A batch of n = x.numel() /
    in_features rows runs the kernel when n is one of the prepared n values (the task's, by default);
    other n run F.linear on the original weight (other_n="dense", the default) or raise ValueError
    (other_n="error", which keeps no reference to the dense weight). A kernel searched in layout "nk"
    reads x as it is (contiguous [n, in_features], PyTorch's usual) and writes a contiguous
    [n, out_features] output: no copy. A "kn" kernel's output has strides (1, n) (the kernel writes
    Y^T) and its input is copied once into B = X^T (x.t().contiguous(); a following kn SparseLinear
    takes the previous one's output without a copy). The module is fixed to the device and dtype it was made on (.to() does not
    move the kernel). forward makes no host synchronisation and allocates only through the caching
    allocator on the current stream, so it can be captured in a CUDA graph; keep the module alive as long
    as such a graph (its kernel state is released when the module is collected). Inference only.
    """

    def __init__(self, task, handle, n_values, bias, weight, other_n):
        super().__init__()
        self.task = task["name"]
        self.layout = task.get("layout", "kn")
        self._spmm = torch.ops.sparseditto.spmm_nk if self.layout == "nk" else torch.ops.sparseditto.spmm
        self.in_features, self.out_features = task["cols"], task["rows"]
        self.n_values = frozenset(n_values)
        self.other_n = other_n
        self.handle = handle
        self.bias = bias
        self._dense_weight = weight
        self._release = weakref.finalize(self, torch.ops.sparseditto.release, handle)

    @classmethod
    def from_linear(cls, linear, task=None, *, n_values=None, other_n="dense", library=None, check_sparsity=True):
        """A SparseLinear computing what `linear` (an nn.Linear on a CUDA device) computes.

        task: the task of this package whose kernel to use; default the one task of the shape of
          linear.weight. n_values: the batch sizes (rows of x) to run the kernel at; default the task's,
          those the search timed and checked. other_n: "dense" or "error", for other batch sizes (see the
          class). library: the kernel's shared library, default the one kernels.json names.
        Raises PatternError (a ValueError) naming what differs when the weight's shape, dtype or pattern
        is not the task's (see weight_pattern.check_and_compress); KeyError for an unknown task;
        FileNotFoundError for a missing library; ValueError for a weight not on a CUDA device or a bad
        argument; RuntimeError when the kernel refuses the weight at prepare (its reason) or the
        operators cannot be built.
        """
        if not isinstance(linear, torch.nn.Linear):
            raise TypeError(f"sparseditto: from_linear takes an nn.Linear, got {type(linear).__name__}")
        if other_n not in ("dense", "error"):
            raise ValueError(f"sparseditto: other_n is 'dense' or 'error', got {other_n!r}")
        weight = linear.weight
        spec = _task_for(weight, task)
        n_values = list(spec["n_values"] if n_values is None else n_values)
        if not n_values or any(int(n) != n or n < 1 for n in n_values):
            raise ValueError(f"sparseditto: n_values must be positive integers, got {n_values}")
        row_offsets, col_indices, values = check_and_compress(weight, spec, check_sparsity)
        if weight.device.type != "cuda":
            raise ValueError(f"sparseditto: the weight is on {weight.device}; the kernels run on CUDA devices "
                             f"(move the layer first, e.g. linear.cuda())")
        path = _library_path(spec, library)
        load_op()
        p = spec["pattern"]
        pattern = [FAMILY_IDS[p["family"]]] + [int(p.get(k, 0)) for k in
                                               ("block_rows", "block_cols", "n", "m", "half_bandwidth", "num_blocks")]
        handle = torch.ops.sparseditto.prepare(
            path, spec["symbol_prefix"], spec["rows"], spec["cols"], row_offsets, col_indices, values,
            [int(n) for n in n_values], DTYPES[spec["dtype"]][1], pattern, float(p.get("sparsity", 0.0)),
            weight.device.index if weight.device.index is not None else torch.cuda.current_device(),
            LAYOUTS[spec.get("layout", "kn")])
        bias = None if linear.bias is None else linear.bias.detach()
        return cls(spec, handle, n_values, bias, weight.detach() if other_n == "dense" else None, other_n)

    def forward(self, x):
        if x.shape[-1] != self.in_features:
            raise ValueError(f"sparseditto: x has {x.shape[-1]} features, {self.task} takes {self.in_features}")
        lead = x.shape[:-1]
        n = x.numel() // self.in_features
        route = kernel_dispatch(n, self.n_values, self.other_n)
        if route == "dense":
            return F.linear(x, self._dense_weight, self.bias)
        if route == "empty":
            return x.new_empty(*lead, self.out_features)
        y = self._spmm(x.reshape(n, self.in_features), self.handle, self.out_features)
        if self.bias is not None:
            y = y + self.bias
        return y.reshape(*lead, self.out_features)

    def extra_repr(self):
        return (f"task={self.task}, layout={self.layout}, in_features={self.in_features}, "
                f"out_features={self.out_features}, "
                f"n_values={sorted(self.n_values)}, other_n={self.other_n!r}, bias={self.bias is not None}")
