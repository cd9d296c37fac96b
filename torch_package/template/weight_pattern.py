"""Does a weight have the pattern a SparseDitto kernel was searched for, and its CSR for the kernel.

A kernel may rely on what its task declared (kernel_abi/sparseditto_kernel.h): the family and its
parameters, with the structure the search's matrices had (matrix/generators.h): at most n nonzeros in
every aligned group of m columns (N:M), dense blocks of the block grid, whole rows, whole columns, a
dense band, dense diagonal blocks, every entry. So the CSR handed to the kernel holds the family's
units whole: a zero inside a kept block, row, column or band is stored as an explicit zero, and an
N:M group with fewer than n nonzeros gets explicit zeros up to n (a kernel that stores exactly n per
group then still sees what it was tested on). The exported kernel's prepare checks the same
structure again in C (kernel_abi/sparseditto_weight_check.h where the export ships it).

Pure functions over CPU tensors; thread-safe.
"""

import torch

FAMILY_IDS = {  # enum sd_pattern_family
    "unstructured": 1, "block": 2, "n_m": 3, "row_sparse": 4, "column_sparse": 5,
    "banded": 6, "block_diagonal": 7, "dense": 8, "file": 9,
}
DTYPES = {"fp32": (torch.float32, 1), "fp16": (torch.float16, 2), "bf16": (torch.bfloat16, 3)}  # enum sd_dtype
# Families whose declared sparsity is a fraction of zeros that the weight should reach.
_SPARSITY_FAMILIES = ("unstructured", "block", "row_sparse", "column_sparse")
_SPARSITY_SLACK = 0.01  # a weight may hold this much less sparsity than declared


class PatternError(ValueError):
    """The weight does not have the task's pattern; the message names what differs and where."""


def _first(mask):
    """The first index (a tuple of ints) where `mask` is true."""
    return tuple(int(i) for i in mask.nonzero()[0])


def _nm_mask(nonzero, n, m):
    rows, cols = nonzero.shape
    groups = (cols + m - 1) // m
    padded = torch.zeros(rows, groups * m, dtype=torch.bool)
    padded[:, :cols] = nonzero
    grouped = padded.view(rows, groups, m)
    counts = grouped.sum(-1)
    if bool((counts > n).any()):
        r, g = _first(counts > n)
        raise PatternError(
            f"row {r}, columns {g * m}..{min(cols, g * m + m) - 1}: {int(counts[r, g])} nonzeros, "
            f"the {n}:{m} pattern allows {n}")
    valid = torch.zeros(groups * m, dtype=torch.bool)
    valid[:cols] = True
    free = ~grouped & valid.view(1, groups, m)
    lengths = valid.view(groups, m).sum(-1)  # the last group may be short
    need = (torch.minimum(lengths, torch.tensor(n)).view(1, groups) - counts).clamp(min=0)
    pad = free & (free.cumsum(-1) <= need.unsqueeze(-1))
    return (grouped | pad).view(rows, groups * m)[:, :cols]


def _block_mask(nonzero, br, bc):
    rows, cols = nonzero.shape
    grid_r, grid_c = (rows + br - 1) // br, (cols + bc - 1) // bc
    padded = torch.zeros(grid_r * br, grid_c * bc, dtype=torch.bool)
    padded[:rows, :cols] = nonzero
    kept = padded.view(grid_r, br, grid_c, bc).any(3).any(1)
    return kept.repeat_interleave(br, 0).repeat_interleave(bc, 1)[:rows, :cols]


def _band_mask(rows, cols, half):
    center = torch.arange(rows).mul(cols).div(rows, rounding_mode="floor").view(rows, 1)
    return (torch.arange(cols).view(1, cols) - center).abs() <= half


def _block_diagonal_mask(rows, cols, blocks):
    b = torch.arange(blocks)
    row_block = torch.bucketize(torch.arange(rows), (b + 1) * rows // blocks, right=True)
    col_block = torch.bucketize(torch.arange(cols), (b + 1) * cols // blocks, right=True)
    return row_block.view(rows, 1) == col_block.view(1, cols)


def _outside(nonzero, allowed, what):
    stray = nonzero & ~allowed
    if bool(stray.any()):
        r, c = _first(stray)
        raise PatternError(f"row {r} has a nonzero at column {c}, outside {what}")


def _kept_mask(nonzero, family, p):
    rows, cols = nonzero.shape
    if family == "n_m":
        return _nm_mask(nonzero, p["n"], p["m"])
    if family == "block":
        return _block_mask(nonzero, p["block_rows"], p["block_cols"])
    if family == "row_sparse":
        return nonzero.any(1, keepdim=True).expand(rows, cols)
    if family == "column_sparse":
        return nonzero.any(0, keepdim=True).expand(rows, cols)
    if family == "banded":
        band = _band_mask(rows, cols, p["half_bandwidth"])
        _outside(nonzero, band, f"the band of half bandwidth {p['half_bandwidth']} around column row*{cols}/{rows}")
        return band
    if family == "block_diagonal":
        diagonal = _block_diagonal_mask(rows, cols, p["num_blocks"])
        _outside(nonzero, diagonal, f"the {p['num_blocks']} diagonal blocks")
        return diagonal
    if family == "dense":
        return torch.ones(rows, cols, dtype=torch.bool)
    if family in ("unstructured", "file"):
        return nonzero
    raise PatternError(f"unknown pattern family {family!r}")


def check_and_compress(weight, task, check_sparsity=True):
    """The CSR (row_offsets int32, col_indices int32, values fp32; CPU) of `weight` for `task`'s kernel.

    `weight` is a 2-D tensor (any device) already in the task's dtype; `task` is one entry of the
    package's kernels.json. Raises PatternError naming what differs: the shape, the dtype, a structure
    the family does not allow (the row, group, block or column), or, when `check_sparsity`, a weight
    with less sparsity than declared for families that declare one (correct, but the kernel's times
    were measured at the declared sparsity). For a task over a matrix file only the shape is checked
    here; the exported kernel's prepare compares the structure with the searched matrix.
    """
    rows, cols, family, p = task["rows"], task["cols"], task["pattern"]["family"], task["pattern"]
    if weight.dim() != 2:
        raise PatternError(f"the weight is {weight.dim()}-D, expected a 2-D [out_features, in_features] matrix")
    if tuple(weight.shape) != (rows, cols):
        raise PatternError(f"the weight is {weight.shape[0]} x {weight.shape[1]} (out x in features); task "
                           f"{task['name']} was searched for {rows} x {cols}")
    if weight.dtype != DTYPES[task["dtype"]][0]:
        raise PatternError(f"the weight is {weight.dtype}, task {task['name']} was searched for {task['dtype']} "
                           f"({DTYPES[task['dtype']][0]}): convert the layer first, e.g. linear.half()")
    w = weight.detach().to("cpu", torch.float32)
    nonzero = w != 0
    if check_sparsity and family in _SPARSITY_FAMILIES and p.get("sparsity", 0) > 0:
        unit = _kept_mask(nonzero, family, p)
        sparsity = 1.0 - float(unit.sum()) / (rows * cols)
        if sparsity < p["sparsity"] - _SPARSITY_SLACK:
            raise PatternError(
                f"{sparsity:.1%} of the weight's entries are zero (counted in {family} units), task {task['name']} "
                f"declared {p['sparsity']:.1%}: the kernel would be correct but slower than it measured "
                f"(check_sparsity=False accepts it)")
    kept = _kept_mask(nonzero, family, p)
    counts = kept.sum(1)
    if int(counts.sum()) >= 2 ** 31:
        raise PatternError(f"{int(counts.sum())} stored entries: the kernel ABI's int32 offsets hold at most 2^31 - 1")
    row_offsets = torch.zeros(rows + 1, dtype=torch.int32)
    row_offsets[1:] = counts.cumsum(0).to(torch.int32)
    col_indices = kept.nonzero()[:, 1].to(torch.int32).contiguous()
    values = w[kept].contiguous()
    return row_offsets, col_indices, values
