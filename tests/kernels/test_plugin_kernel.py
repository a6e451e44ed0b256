"""A new kernel is its own folder: tests/kernels/plugin/demo_rows/ (a spec, a source, a rule and a threshold of its
own, a walk, an order and a colour) put on ``cocktail.kernels.__path__`` is found by every layer with no edit
anywhere else: the registry in its order, the default rule of its format, the block kernel that extends its walk,
the device profile's variants and the planner's cost, the plots' colours, the source assembler and the compile
check, and on a GPU a product against SciPy's.  It runs in a fresh process, as the registries load once."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import cocktail

PLUGIN = Path(__file__).parent / "plugin"

CHECKS = r"""
import sys
import numpy as np
import scipy.sparse as sp
import cocktail.kernels

cocktail.kernels.__path__.append(sys.argv[1])  # before any registry loads

from cocktail import kernels, formats
from cocktail.auto import planner, variants
from cocktail.auto.features import compute
from cocktail.bench.output import plots
from cocktail.kernels import check, source
from cocktail.tuning.kernel_rules import choose_kernel

names = kernels.names()
assert names.index("demo_rows") == names.index("csr_scalar") + 1, names  # order=15: after csr_scalar's 10
spec = kernels.get("demo_rows")
assert spec in kernels.for_format("csr") and spec not in kernels.for_format("csr_pattern")
assert kernels.block_for("csr", spec).name == "csr_spmm"  # csr_spmm extends every "rows" walk on csr

short = sp.random_array((200, 200), density=0.002, format="csr", random_state=1, dtype=np.float64)
longer = sp.random_array((200, 200), density=0.05, format="csr", random_state=1, dtype=np.float64)
from cocktail import SparseMatrix

stored = lambda S: SparseMatrix(S, format="csr", device="cpu").storage
assert choose_kernel(stored(short)) == "demo_rows"  # its own rule, first by precedence
assert choose_kernel(stored(longer)) != "demo_rows"

v = variants.get("demo_rows")
assert v.category == "flat" and v.format == "csr"
features = compute(stored(longer))
assert planner.work(v, features) == planner.work(variants.get("csr_scalar"), features)  # the same walk, same cost

assert plots.kernel_colours()["demo_rows"] == "#123456" and plots.colour("demo_rows") == "#123456"
assert "__global__ void demo_rows" in source.assemble("demo_rows") and "compute_t" in source.assemble("demo_rows")
compiler = check.backend_available()
if compiler is not None:
    assert check.check_kernel("demo_rows") == [], check.check_kernel("demo_rows")
print("compiled by", compiler)

try:
    import cupy
    gpu = cupy.cuda.runtime.getDeviceCount() > 0
except Exception:
    gpu = False
if gpu:
    A = SparseMatrix(longer, format="csr", kernel="demo_rows")
    x = np.random.default_rng(0).standard_normal(200)
    assert np.allclose(cupy.asnumpy(A @ cupy.asarray(x)), longer @ x)
    print("ran on the GPU")
print("ok")
"""


def _run() -> str:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(cocktail.__file__).parents[1]),
                                                        os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", CHECKS, str(PLUGIN)], capture_output=True, text=True, env=env,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_a_kernel_folder_is_found_by_every_layer_with_no_edit_elsewhere():
    out = _run()
    assert out.strip().endswith("ok")
    if os.environ.get("COCKTAIL_REQUIRE_COMPILER"):
        assert "compiled by None" not in out
