"""The block kernels of the padded and diagonal formats (ell_spmm, sell_spmm, dia_spmm, dia_vi_spmm,
bdia_spmm) on the CPU: found by format and SpMV kernel, configured for k as the rule says, bad parameters
refused, every binder's arguments matching its kernel's signature, and a NumPy walk of each kernel's indexing.

The walks mirror the .cu files loop for loop (a row's slots, diagonals or bands, the stop at the first
padding slot, the skip of columns outside the matrix, the permuted store, tiles of ``lanes * columns`` columns)
over layouts built from the zoo, so the layout premises are checked without a GPU.
"""

from __future__ import annotations

import re
from types import SimpleNamespace

import numpy as np
import pytest
import scipy.sparse as sp

from cocktail import SparseMatrix, kernels
from cocktail.kernels import source
from cocktail.kernels.block_operands import BlockOperands
from cocktail.kernels.csr_spmm import COLUMNS_PER_LANE, LANES
from cocktail.kernels.launch import Launch
from cocktail.tuning import kernel_rules
from cocktail.tuning.launch_rules import RULES
from oracle import few_values
from tiers import in_turn
from zoo import ZOO

#: Format -> (its SpMV kernel, the block kernel extending it).
BLOCK_KERNELS = {"ell": ("ell", "ell_spmm"), "sell": ("sell", "sell_spmm"), "dia": ("dia", "dia_spmm"),
                 "dia_vi": ("dia_vi", "dia_vi_spmm"), "bdia": ("bdia", "bdia_spmm")}
#: Block kernel -> the other SpMV kernels of its format it extends too (of the same walk).
ALSO_EXTENDS = {"bdia_spmm": ("bdia_direct",)}
#: The block kernels with vector strips (16-byte loads of adjacent columns), and those with a ``prepare``.
VECTOR = ("dia_spmm", "dia_vi_spmm", "bdia_spmm")
PREPARED = ("sell_spmm", "bdia_spmm")
#: The block kernels taking several consecutive rows a group (a last template argument: 1, 2 or 4 rows).
ROWS = ("dia_spmm", "dia_vi_spmm", "bdia_spmm")
PROPS = SimpleNamespace(max_threads_per_block=1024, id=0)


def _configure(name: str, params: dict) -> dict:
    spec = kernels.get_block(name)
    fmt = SimpleNamespace(name=spec.formats[0], dtype=np.dtype("float64"))
    return spec.configure(spec, fmt, spec.resolve_params(params), PROPS, RULES)


@pytest.mark.parametrize("fmt", list(BLOCK_KERNELS))
def test_the_block_kernel_is_found_by_format_and_spmv_kernel(fmt):
    spmv, block = BLOCK_KERNELS[fmt]
    assert kernels.block_for(fmt, kernels.get(spmv)).name == block
    spec = kernels.get_block(block)
    extends = (spmv, *ALSO_EXTENDS.get(block, ()))
    assert spec.formats == (fmt,) and spec.default_for == (fmt,) and spec.extends == (kernels.get(spmv).walk,)
    assert all(kernels.block_for(fmt, kernels.get(s)).name == block for s in extends)
    assert spec.source == block and spec.deterministic and not spec.profile
    assert (spec.prepare is not None) == (block in PREPARED)
    vector = block in VECTOR  # vector strips (16-byte loads of adjacent columns) too
    more = {**({"vector": None} if vector else {}), **({"prepared": None} if block in PREPARED else {}),
            **({"rows_per_group": None} if block in ROWS else {})}
    assert spec.defaults == {"operands": None, "lanes": None, "columns_per_lane": None, **more,
                             "ldg": True, "block_threads": None}
    assert block in kernels.block_names() and block not in kernels.names()  # no SpMV path lists it
    scalar = [f"{block}<float, int, {t}, {c}{', false' if vector else ''}>" for t in LANES for c in COLUMNS_PER_LANE]
    vectors = [f"{block}<float, int, {t}, {c}, true>" for t in LANES for c in COLUMNS_PER_LANE if c >= 4] if vector else []
    rows = (1, 2, 4) if block in ROWS else (None,)
    suffixed = [e if r is None else f"{e[:-1]}, {r}>" for r in rows for e in scalar + vectors]
    assert spec.expressions("float", "int") == suffixed
    extra = 2 * len(LANES) * (2 + 3) if vector else 0  # float: 4 and 8 columns; double: 2, 4 and 8
    assert len(spec.all_expressions()) == len(rows) * (4 * len(LANES) * len(COLUMNS_PER_LANE) + extra)
    last = f"{block}<double, long long, 32, 8{', true' if vector else ''}{', 4' if block in ROWS else ''}>"
    assert last in spec.all_expressions()
    # Another format's kernel, or a format's other kernel, is not extended.
    other = "csr_vector" if fmt != "ell" else "sell"
    assert kernels.block_for(fmt, kernels.get(other)) is None
    assert kernels.block_for("csr", kernels.get(spmv)) is None


@pytest.mark.parametrize("block", [b for _, b in BLOCK_KERNELS.values()])
def test_configure_takes_the_rules_shape_for_k(block):
    for k in (1, 2, 3, 8, 16, 33, 64, 256, 999):
        config = _configure(block, {"operands": BlockOperands.row_major(k)})
        assert (config["lanes"], config["columns_per_lane"]) == kernel_rules.spmm_shape(k, True)
        assert config["operands"] == BlockOperands.row_major(k)
        assert config["ldg"] is True and config["block_threads"] in (32, 64, 128, 256, 512, 1024)
        column_major = BlockOperands(k, (1, 5000), (1, 4000))
        config = _configure(block, {"operands": column_major})
        assert (config["lanes"], config["columns_per_lane"]) == kernel_rules.spmm_shape(k, column_major.x_row_major)
    given = _configure(block, {"operands": BlockOperands.row_major(40), "lanes": 2, "columns_per_lane": 8,
                               "ldg": False, "block_threads": 64})
    assert (given["lanes"], given["columns_per_lane"], given["ldg"], given["block_threads"]) == (2, 8, False, 64)


@pytest.mark.parametrize("block", [b for _, b in BLOCK_KERNELS.values()])
@pytest.mark.parametrize("bad", [{"operands": None}, {"operands": 4}, {"operands": BlockOperands.row_major(0)},
                                 {"operands": BlockOperands.row_major(4), "lanes": 3},
                                 {"operands": BlockOperands.row_major(4), "lanes": 64},
                                 {"operands": BlockOperands.row_major(4), "lanes": True},
                                 {"operands": BlockOperands.row_major(4), "columns_per_lane": 16},
                                 {"operands": BlockOperands.row_major(4), "columns_per_lane": 3},
                                 {"operands": BlockOperands.row_major(4), "block_threads": 1000}])
def test_bad_parameters_are_refused_naming_the_kernel(block, bad):
    with pytest.raises(ValueError, match=block):
        _configure(block, bad)


def test_an_unknown_parameter_is_refused():
    with pytest.raises(TypeError, match="kernel 'ell_spmm' has no parameter 'threads_per_row'"):
        kernels.get_block("ell_spmm").resolve_params({"threads_per_row": 2})


# --- the binders' arguments against the kernels' signatures ------------------------------------------

_MACROS = {"COCKTAIL_BLOCK_ARGS": ["const long long k", "const long long x_row_step", "const long long x_col_step",
                                   "const long long y_row_step", "const long long y_col_step"],
           "COCKTAIL_PRODUCT_ARGS(T)": ["const T* x", "T* y", "const T alpha", "const T beta"]}


def _signature(block: str, v: str, i: str) -> list[str]:
    """The C parameter types of ``__global__ void <block>(...)`` for values ``v`` and indices ``i``, macros
    expanded, qualifiers dropped."""
    code = source.assemble(block)
    params = re.search(rf"__global__ void {block}\((.*?)\)\s*\{{", code, re.S).group(1)
    out = []
    for p in (p.strip() for p in params.split(",")):
        for q in _MACROS.get(p, [p]):
            q = q.replace("__restrict__", "").replace("const ", "").strip()
            c_type = " ".join(q.split()[:-1]).replace(" *", "*")
            out.append({"T": v, "T*": v + "*", "I": i, "I*": i + "*"}.get(c_type, c_type))
    return out


def _c_type(arg, v: str) -> str:
    """The C type a launch argument passes (``v``: the value type, of the slots)."""
    from cocktail.kernels.launch import ALPHA, BETA, X, Y

    if arg is X or arg is Y:
        return v + "*"
    if arg is ALPHA or arg is BETA:
        return v
    names = {np.dtype(np.float32): "float", np.dtype(np.float64): "double", np.dtype(np.int32): "int",
             np.dtype(np.int64): "long long", np.dtype(np.uint8): "unsigned char"}
    if isinstance(arg, np.ndarray):
        return names[arg.dtype] + "*"
    return names[np.asarray(arg).dtype]


def _scipy(fmt: str, zm, dtype="float64"):
    """The zoo matrix as SciPy holds it (values on few_values' grid for dia_vi's table)."""
    data = zm.data.astype(dtype)
    return sp.csr_array((few_values(data) if fmt == "dia_vi" else data, zm.indices, zm.indptr), shape=zm.shape)


def _layout(fmt: str, zm, dtype, index_dtype, **params):
    """The host storage of ``zm`` in ``fmt`` (canonicalized as any input is)."""
    return SparseMatrix(_scipy(fmt, zm, dtype), format=fmt, device="cpu", index_dtype=index_dtype, max_fill=None,
                        **params).storage


class _Recorded:
    def __init__(self, function, grid, block, args, scalar_dtype, shared_mem=0):
        self.function, self.grid, self.block, self.args = function, grid, block, tuple(args)
        self.scalar_dtype, self.shared_mem = np.dtype(scalar_dtype), shared_mem

    striding = classmethod(Launch.striding.__func__)  # the binders' grid sizing, recording what it launches


@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("fmt", list(BLOCK_KERNELS))
def test_the_binders_arguments_match_the_kernels_signature(fmt, dtype, index_dtype, monkeypatch):
    import importlib

    from cocktail.kernels.device import DeviceProps
    from cocktail.kernels.spec import KernelSpec, index_type_name, value_type_name

    block = BLOCK_KERNELS[fmt][1]
    module = importlib.import_module(f"cocktail.kernels.{block}")
    monkeypatch.setattr(module, "Launch", _Recorded)
    monkeypatch.setattr(KernelSpec, "compiled", lambda self, expression, ldg, device_id: (expression, ldg))
    props = DeviceProps(0, "fake", 132, 1024, 2048, 49152, 232448, 2**31 - 1, 32, 50 << 20, (9, 0))
    storage = _layout(fmt, next(z for z in ZOO if z.name == "power_law"), dtype, index_dtype,
                      **({"sort_window": 64} if fmt == "sell" else {}))
    spec = kernels.get_block(block)
    operands = BlockOperands(37, (1, 150), (40, 1))
    config = spec.configure(spec, storage, spec.resolve_params({"operands": operands}), props, RULES)
    (launch,) = spec.bind(storage, config, props)
    v, i = value_type_name(dtype), index_type_name(index_dtype)
    t, c = config["lanes"], config["columns_per_lane"]
    flag = ", false" if block in VECTOR else ""  # column-major X: scalar strips
    flag += f", {config['rows_per_group']}" if block in ROWS else ""
    assert launch.function == (f"{block}<{v}, {i}, {t}, {c}{flag}>", True)
    assert [_c_type(a, v) for a in launch.args] == _signature(block, v, i)
    assert [int(a) for a in launch.args[1:6]] == [37, 1, 150, 40, 1]
    assert launch.scalar_dtype == np.dtype(dtype) and launch.grid >= 1 and launch.block == config["block_threads"]
    if fmt == "dia_vi":
        assert launch.shared_mem == storage.table.shape[0] * np.dtype(dtype).itemsize
    if fmt == "sell":
        assert launch.args[7] == 1  # permuted: sort_window 64


# --- NumPy walks of the kernels' indexing -----------------------------------------------------------

def _strips(k: int, lanes: int, columns: int):
    """The (tile start + lane, strip columns) each lane of a group holds, tile by tile (spmm.cuh)."""
    for tile in range(0, k, lanes * columns):
        for lane in range(lanes):
            j = tile + lane
            yield [j + c * lanes for c in range(columns) if j + c * lanes < k]


def _walk(fmt: str, A, X, lanes: int, columns: int):
    """Y = A X walked as the block kernel of ``fmt`` walks it (alpha 1, beta 0)."""
    m, n = A.shape
    k = X.shape[1]
    Y = np.full((m, k), np.nan)
    for p in range(m):
        entries = []  # (column, value) in the order the kernel reads them
        if fmt == "ell":
            col, data = A.col.ravel(), A.data.ravel()
            for s in range(A.width):
                slot = s * A.stride + p
                if col[slot] < 0:
                    break
                entries.append((int(col[slot]), data[slot]))
            out = p
        elif fmt == "bdia":  # bdia_spmm: band by band, each band's diagonals in order, columns in [0, n)
            ptr = A.band_ptr.astype(np.int64)
            for b, off in enumerate(A.offsets.astype(np.int64)):
                c0, width = p + int(off), int(ptr[b + 1] - ptr[b])
                lo, hi = min(max(-c0, 0), width), min(max(n - c0, 0), width)  # band_window
                for q in range(lo, hi):
                    entries.append((c0 + q, A.data.ravel()[(int(ptr[b]) + q) * A.stride + p]))
            out = p
        elif fmt == "sell":
            C = A.slice_height
            ptr = A.slice_ptr.astype(np.int64)
            s = p // C
            for slot in range(int(ptr[s]) + p - s * C, int(ptr[s + 1]), C):
                if A.col[slot] < 0:
                    break
                entries.append((int(A.col[slot]), A.data[slot]))
            out = int(A.perm[p]) if int(A.params["sort_window"]) != 1 else p
        else:
            flat = (A.data if fmt == "dia" else A.codes).ravel()
            for d, off in enumerate(A.offsets.astype(np.int64)):
                c = p + int(off)
                if c < 0 or c >= n:
                    continue
                value = flat[d * A.stride + p]
                entries.append((c, value if fmt == "dia" else A.table[value]))
            out = p
        for cols in _strips(k, lanes, columns):
            acc = np.zeros(len(cols))
            for c, value in entries:
                acc += float(value) * X[c, cols]
            assert np.isnan(Y[out, cols]).all()  # each (row, column) of Y written once
            Y[out, cols] = acc
    return Y


WALKED = [z for z in ZOO if 0 < z.shape[0] * z.shape[1] and z.shape[0] <= 200]
LAYOUTS = [("ell", {}), ("ell", {"align": 1}), ("sell", {}), ("sell", {"sort_window": 64}),
           ("sell", {"slice_height": 3, "sort_window": 12, "width_multiple": 2}), ("sell", {"slice_height": 1}),
           ("dia", {}), ("dia", {"align": 1}), ("dia_vi", {}), ("dia_vi", {"align": 1}), ("bdia", {}),
           ("bdia", {"align": 1})]


# The default tier: each matrix in 4 of the 12 layouts, taken in turn (each layout on 4 or 5 matrices); the rest
# exhaustive.
@pytest.mark.parametrize("zm,layout", in_turn([WALKED, LAYOUTS], [lambda m: m.name, lambda l: l[0] + "".join(
    f",{k}={v}" for k, v in l[1].items())], keep=4))
def test_the_kernels_walk_gives_the_product(zm, layout):
    fmt, params = layout
    A = _layout(fmt, zm, "float64", "int32", **params)
    S = _scipy(fmt, zm)
    rng = np.random.default_rng(len(zm.name))
    for k, (lanes, columns) in ((1, (1, 1)), (3, (1, 4)), (5, (2, 2)), (11, (4, 2))):
        X = rng.standard_normal((zm.shape[1], k))
        np.testing.assert_allclose(_walk(fmt, A, X, lanes, columns), S @ X, rtol=1e-12, atol=1e-12)


def test_sell_widens_its_slice_pointers_once_when_prepared():
    from cocktail.kernels import sell_spmm

    storage = _layout("sell", next(z for z in ZOO if z.name == "power_law"), "float32", "int32")
    widened = sell_spmm.prepare(storage)
    assert widened.dtype == np.int64 and np.array_equal(widened, storage.slice_ptr)
    assert kernels.get_block("sell_spmm").prepare is sell_spmm.prepare


def test_bdia_widens_its_band_pointers_once_when_prepared():
    from cocktail.kernels import bdia_spmm

    for index_dtype in ("int32", "int64"):
        storage = _layout("bdia", next(z for z in ZOO if z.name == "power_law"), "float32", index_dtype)
        widened = bdia_spmm.prepare(storage)
        assert widened.dtype == np.int64 and np.array_equal(widened, storage.band_ptr)
        if storage.band_ptr.dtype == np.int64:
            assert widened is storage.band_ptr  # nothing to widen
    assert kernels.get_block("bdia_spmm").prepare is bdia_spmm.prepare
