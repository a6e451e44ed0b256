"""Host-side logic of the dia, ell and pkt kernels (no GPU needed)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from cocktail import SparseMatrix, kernels
from cocktail.kernels import pkt


@pytest.mark.parametrize("name", ["dia", "ell", "pkt"])
def test_registered_with_every_instantiation(name):
    spec = kernels.get(name)
    assert spec.formats == (name,) and spec.source == name and spec.deterministic
    assert spec.all_expressions() == tuple(f"{name}<{v}, {i}>" for v in spec.precisions
                                           for i in ("int", "long long"))
    assert spec.precisions[:2] == ("float", "double")


def test_parameters():
    assert kernels.get("dia").defaults == {"ldg": True, "block_threads": None}
    assert kernels.get("ell").defaults == {"ldg": True, "block_threads": None}
    assert kernels.get("pkt").defaults == {"ldg": True, "coo_kernel": "coo_segmented"}
    with pytest.raises(TypeError, match="its parameters are: block_threads, ldg"):
        kernels.get("ell").resolve_params({"threads_per_row": 4})


def test_max_packet_vertices():
    assert pkt.max_packet_vertices(np.array([0, 3, 10, 12])) == 7
    assert pkt.max_packet_vertices(np.array([0])) == 0
    assert pkt.max_packet_vertices(np.array([0, 5], dtype=np.int32)) == 5


def test_shared_memory_rule():
    assert pkt.shared_bytes(3072, 8) == 48 * 1024
    assert pkt.shared_opt_in(48 * 1024, 48 * 1024, 227 * 1024) is None
    assert pkt.shared_opt_in(100_000, 48 * 1024, 227 * 1024) == 227 * 1024
    with pytest.raises(ValueError, match="smaller packet_rows"):
        pkt.shared_opt_in(300_000, 48 * 1024, 227 * 1024)


def test_packets_cover_every_vertex():
    S = sp.random_array((300, 200), density=0.03, format="csr", random_state=3)
    fmt = SparseMatrix(S, format="pkt", device="cpu", packet_rows=64, partitioner="rcm", max_fill=None).storage
    ptr = np.asarray(fmt.packet_ptr, dtype=np.int64)
    pkt._check_cover(fmt, ptr)  # the format's packets hold all max(m, n) vertices
    assert np.array_equal(np.sort(fmt.perm), np.arange(300))
    with pytest.raises(ValueError, match="covering all 300 vertices"):
        pkt._check_cover(fmt, ptr[:-1])
