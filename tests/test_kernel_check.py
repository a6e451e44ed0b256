"""The compile check and the kernel registry, on the CPU."""

from __future__ import annotations

import pytest

from cocktail import kernels
from cocktail.kernels import check, source

COMPILER = check.backend_available()
needs_compiler = pytest.mark.skipif(COMPILER is None, reason="no NVRTC (cocktail[nvrtc]) and no nvcc")


def test_registry_names_match_files_and_functions():
    specs = [kernels.get(n) for n in kernels.names()] + [kernels.get_block(n) for n in kernels.block_names()]
    assert [s.name for s in specs[-len(kernels.block_names()):]] == kernels.block_names() == ["csr_spmm"]
    for spec in specs:
        name = spec.name
        assert spec.name == name
        if spec.source is not None:
            assert spec.source == name
            code = source.assemble(name)
            assert f"void {name}(" in code or f"void {name} (" in code
            for expr in spec.all_expressions():
                assert expr.split("<")[0].startswith(name)


def test_unknown_kernel():
    with pytest.raises(ValueError, match="unknown kernel 'nope'; registered kernels: csr_scalar"):
        kernels.get("nope")


def test_kernel_parameters_are_checked():
    with pytest.raises(TypeError, match="kernel 'csr_scalar' has no parameter 'omega'"):
        kernels.get("csr_scalar").resolve_params({"omega": 3})


@needs_compiler
@pytest.mark.parametrize("name", kernels.names() + kernels.block_names())
def test_every_kernel_compiles(name):
    assert check.check_kernel(name) == []


@needs_compiler
def test_check_reports_errors(monkeypatch):
    broken = source.assemble("csr_scalar").replace("sum += data[j]", "sum += undefined_name[j]")
    monkeypatch.setattr(source, "assemble", lambda stem: broken)
    errors = check.check_kernel("csr_scalar")
    assert errors and "undefined_name" in errors[0]


@needs_compiler
@pytest.mark.parametrize("stem", list(source.HELPERS))
def test_harness_helpers_compile(stem):
    assert check.check_helper(stem) == []


@needs_compiler
def test_the_compile_log_leaves_python_objects_alone():
    # NVRTC writes its log (here one NUL) into the buffer it is given: given b" " * 1, which is
    # Python's shared one-byte object, it turned every b" " of the process into b"\x00" (SciPy's
    # Matrix Market writer then wrote NULs for spaces).
    assert check.check_kernel("csr_scalar") == []
    assert b" " == bytes([32]) and b" ".join([b"1", b"2"]) == b"1 2"


def test_a_block_kernel_is_found_by_format_and_configured_for_k():
    from types import SimpleNamespace

    from cocktail.tuning import kernel_rules
    from cocktail.tuning.launch_rules import RULES

    row_kernel, balanced = kernels.get("csr_vector"), kernels.get("csr_merge")
    assert kernels.block_for("csr", row_kernel).name == "csr_spmm" and kernels.block_for("csr", balanced) is None
    assert kernels.block_for("ell", kernels.get("ell")) is None
    assert "csr_spmm" not in kernels.names()  # not an SpMV kernel: no SpMV path lists it
    props = SimpleNamespace(max_threads_per_block=1024)
    fmt = SimpleNamespace(name="csr")
    spec = kernels.get_block("csr_spmm")
    shapes = {k: spec.configure(spec, fmt, spec.resolve_params({"k": k}), props, RULES)
              for k in (1, 3, 32, 33, 256, 999)}
    assert {k: (c["lanes"], c["columns_per_lane"]) for k, c in shapes.items()} == {
        1: (1, 1), 3: (4, 1), 32: (32, 1), 33: (32, 2), 256: (32, 8), 999: (32, 8)}
    assert kernel_rules.spmm_shape(64) == (32, 2)
    for bad in ({"k": None}, {"k": 0}, {"k": True}, {"k": 4, "lanes": 3}, {"k": 4, "columns_per_lane": 16}):
        with pytest.raises(ValueError, match="csr_spmm"):
            spec.configure(spec, fmt, spec.resolve_params(bad), props, RULES)
