"""A missing optional package never changes a number: it refuses clearly, naming the package, or changes nothing.

Each optional package this environment has is hidden in a subprocess (tests/hide_packages.py) and Cocktail's
numbers there (tests/optional_fingerprint.py: every format's stored values and products in each value dtype,
transposes, scaled matrices, the suites' FEM matrices) must be those of the full environment bit for bit.  The
exactness tests also run with ml_dtypes hidden: without it float64 matrices were once rounded to float32.
CI also runs a subset of the suite in an install of the base dependencies alone (.ci/run).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hide_packages import HIDE_VARIABLE, OPTIONAL

HERE = Path(__file__).resolve().parent
#: Packages whose absence changes what runs by design, not a number: without CuPy everything runs on the CPU
#: (the fingerprint is the CPU's anyway); hypothesis only drives tests.
NOT_FINGERPRINTED = ("cupy", "cupyx", "hypothesis")


def _installed(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


PRESENT = [n for n in OPTIONAL if n not in NOT_FINGERPRINTED and _installed(n)]


def _env() -> dict:
    src = str(HERE.parent / "src")
    return dict(os.environ, PYTHONPATH=os.pathsep.join([src, os.environ.get("PYTHONPATH", "")]))


def _fingerprint(hidden: str = "") -> dict:
    done = subprocess.run([sys.executable, str(HERE / "optional_fingerprint.py"), hidden], capture_output=True,
                          text=True, timeout=600, env=_env())
    assert done.returncode == 0, f"fingerprint with {hidden or 'nothing'} hidden failed:\n{done.stderr[-3000:]}"
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def full() -> dict:
    return _fingerprint()


def test_the_fingerprint_covers_every_dtype_and_the_suites(full):
    assert any(k.startswith("suite/fem_") for k in full)
    for dtype in ("float16", "float32", "float64", "complex64", "complex128"):
        measured = [k for k, v in full.items() if k.startswith(dtype + "/") and not v.startswith("refused")]
        assert len(measured) >= 8, (dtype, measured)


@pytest.mark.parametrize("package", PRESENT or [pytest.param(None, marks=pytest.mark.skip(
    reason=f"none of the optional packages {OPTIONAL} is installed here: this install is the one without them"))])
def test_hiding_an_optional_package_changes_no_number(package, full):
    without = _fingerprint(package)
    differ = {k: (full.get(k), without.get(k)) for k in full.keys() | without.keys() if full.get(k) != without.get(k)}
    assert not differ, f"without {package}: {len(differ)} results differ, e.g. {sorted(differ.items())[:5]}"


@pytest.mark.skipif(not _installed("ml_dtypes"), reason="ml_dtypes is not installed: the run itself is without it")
def test_the_exactness_tests_pass_with_ml_dtypes_hidden(request):
    tier = ["--exhaustive"] if request.config.getoption("--exhaustive") else []  # the tier this run is in
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", *tier,
                           str(HERE / "matrix" / "test_derived_exact.py"), str(HERE / "matrix" / "test_precision.py")],
                          capture_output=True, text=True, timeout=900, env={**_env(), HIDE_VARIABLE: "ml_dtypes"},
                          cwd=HERE.parent)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and " failed" not in done.stdout


def test_bfloat16_without_ml_dtypes_is_refused_naming_it():
    """Every way of asking for bfloat16 names the package where it is missing (astype once said only 'data type
    not understood')."""
    script = (
        "import sys; sys.modules['ml_dtypes'] = None\n"
        "import numpy as np, scipy.sparse as sp, warnings; warnings.simplefilter('ignore')\n"
        "import cocktail\n"
        "A = cocktail.SparseMatrix(sp.eye_array(40, format='csr'), device='cpu')\n"
        "for make in (lambda: A.astype('bfloat16'), lambda: cocktail.SparseMatrix(sp.eye_array(4), dtype='bfloat16',"
        " device='cpu')):\n"
        "    try:\n"
        "        make()\n"
        "    except TypeError as exc:\n"
        "        assert 'ml_dtypes' in str(exc), exc\n"
        "    else:\n"
        "        raise SystemExit('bfloat16 accepted without ml_dtypes')\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, env=_env())
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-3000:]


def test_a_missing_dtype_is_never_float64():
    """``np.dtype(None)`` is float64: Cocktail's dtype helpers refuse None instead of reading it as float64."""
    from cocktail import precision

    for helper in (precision.dtype_named, precision.is_half, precision.compute_dtype, precision.is_value_dtype):
        with pytest.raises(TypeError, match="got None"):
            helper(None)
    assert not precision.is_bfloat16("float64") and not precision.is_bfloat16("float32")
