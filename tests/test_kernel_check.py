"""The compile check and the kernel registry, on the CPU."""

from __future__ import annotations

import pytest

from cocktail import kernels
from cocktail.kernels import check, source

COMPILER = check.backend_available()
needs_compiler = pytest.mark.skipif(COMPILER is None, reason="no NVRTC (cocktail[nvrtc]) and no nvcc")


def test_registry_names_match_files_and_functions():
    for name in kernels.names():
        spec = kernels.get(name)
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
@pytest.mark.parametrize("name", kernels.names())
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
