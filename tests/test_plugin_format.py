"""What adding a format with a kernel takes: its own modules, registered, and nothing else touched.

The throwaway format lives in a temporary package outside Cocktail; three registrations (the
format, its reference product, its kernel) make it a format of SparseMatrix, the reference
executor, the kernel registry and the launch rules alike.
"""

from __future__ import annotations

import sys
import textwrap
import types

import numpy as np
import pytest
import scipy.sparse as sp

from cocktail import SparseMatrix, formats, kernels, reference
from cocktail.tuning import kernel_rules, launch_rules

SOURCE = '''
from cocktail.formats.base import SparseFormat
from cocktail.formats.csr import CSR
from cocktail.kernels.config import row_kernel
from cocktail.kernels.spec import own_kernel


class RowsFirst(SparseFormat):
    """CSR's arrays under another name: a format with its own name, arrays and byte model."""

    name = "rows_first"
    array_fields = ("data", "indices", "indptr")
    defaults = {}

    @classmethod
    def from_csr(cls, csr, **params):
        return cls(csr.shape, csr.dtype, csr.index_dtype, csr.nnz, cls.resolve_params(params),
                   data=csr.data.copy(), indices=csr.indices.copy(), indptr=csr.indptr.copy())

    def to_csr(self):
        return CSR.from_arrays(self.data, self.indices, self.indptr, self.shape, index_dtype=self.index_dtype)

    def row_lengths(self):
        return self.xp.diff(self.indptr)

    @property
    def stored_slots(self):
        return int(self.data.shape[0])

    def spmv_bytes(self, dtype=None):
        val, idx = self._sizes(dtype)
        return self.nnz * (val + idx) + (self.shape[0] + 1) * idx + self.nnz * val + self.shape[0] * val


def product(fmt, X):
    """The reference product, reading the format's own arrays."""
    out = fmt.xp.zeros((fmt.shape[0], X.shape[1]), dtype=X.dtype)
    rows = fmt.xp.repeat(fmt.xp.arange(fmt.shape[0]), fmt.xp.diff(fmt.indptr))
    fmt.xp.add.at(out, rows, fmt.data[:, None] * X[fmt.indices])
    return out


def bind(fmt, config, props, accumulate=False):
    raise NotImplementedError("no GPU source in a throwaway package")


FORMAT = RowsFirst
SPEC = own_kernel("rows_first_scalar", ("rows_first",), "one thread per row", lambda v, i: [], bind,
                  row_kernel, default=True)
'''


@pytest.fixture
def plugin(tmp_path):
    module = types.ModuleType("throwaway_rows_first")
    exec(compile(textwrap.dedent(SOURCE), str(tmp_path / "throwaway_rows_first.py"), "exec"), module.__dict__)
    sys.modules[module.__name__] = module
    # the three registrations: all the package outside its own module had to do
    formats.register(module.FORMAT)
    reference.register("rows_first")(module.product)
    kernels.register(module.SPEC)
    yield module
    formats._REGISTRY.remove("rows_first")
    reference._PRODUCTS.remove("rows_first")
    kernels._REGISTRY.remove("rows_first_scalar")
    del sys.modules[module.__name__]


def test_a_registered_format_and_kernel_work_everywhere(plugin):
    S = sp.random_array((40, 30), density=0.2, format="csr", rng=np.random.default_rng(1))
    A = SparseMatrix(S, format="rows_first", device="cpu", executor="reference")
    x = np.random.default_rng(2).standard_normal(30)
    np.testing.assert_allclose(A @ x, S @ x, rtol=1e-12)
    assert A.format == "rows_first" and "rows_first" in formats.names()
    assert "rows_first" in A.explain()  # its words: the class's docstring
    np.testing.assert_array_equal(A.storage.to_csr().to_scipy().toarray(), S.toarray())  # an exact round trip
    assert [s.name for s in kernels.for_format("rows_first")] == ["rows_first_scalar"]
    assert kernel_rules.format_kernels()["rows_first"] == "rows_first_scalar"
    assert kernel_rules.choose_kernel(A.storage) == "rows_first_scalar"
    props = types.SimpleNamespace(max_threads_per_block=1024)
    assert launch_rules.configure(kernels.get("rows_first_scalar"), A.storage, {}, props) == {
        "ldg": True, "block_threads": kernel_rules.BLOCK_THREADS}


def test_a_plugin_may_not_shadow_a_registered_name(plugin):
    with pytest.raises(ValueError, match="format 'rows_first' is registered already"):
        formats.register(plugin.FORMAT)
    with pytest.raises(ValueError, match="kernel 'csr_scalar' is registered already"):
        kernels.register(kernels.get("csr_scalar"))


def test_nothing_is_left_registered_after_the_plugin():
    assert "rows_first" not in formats.names() and "rows_first_scalar" not in kernels.names()
