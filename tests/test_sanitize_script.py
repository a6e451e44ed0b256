"""scripts/sanitize.sh instruments Cocktail's kernels through a name filter: the filter must name them all."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "cocktail"


def _filter() -> re.Pattern:
    script = (ROOT / "scripts" / "sanitize.sh").read_text()
    found = re.search(r"^KERNELS='regex=(.+)'$", script, flags=re.MULTILINE)
    assert found, "scripts/sanitize.sh no longer sets KERNELS='regex=...'"
    return re.compile(found.group(1))


def _kernel_names() -> set[str]:
    """Every ``__global__`` function in the package's CUDA files and every kernel built from Python source."""
    names = set()
    for path in PACKAGE.rglob("*.cu"):
        names |= set(re.findall(r"__global__\s+void\s+(?:__launch_bounds__\([^)]*\)\s+)?(\w+)\s*\(", path.read_text()))
    for path in PACKAGE.rglob("*.py"):  # kernels written in Python strings are named cocktail_*
        names |= set(re.findall(r"\"(cocktail_\w+)\"", path.read_text()))
    return names


def test_the_filter_names_every_kernel_of_the_package():
    names = _kernel_names()
    assert {"csr_scalar", "csr_merge_fixup", "coo_segmented_fixup", "dia_vi", "sbell", "cocktail_empty", "cocktail_reference_scatter"} <= names
    pattern = _filter()
    missed = sorted(name for name in names if not pattern.search(name))
    assert not missed, f"scripts/sanitize.sh's KERNELS filter misses {missed}: the tools would not check them"
    # Templates are matched by their mangled names, which hold the name after its length.
    assert pattern.search("_Z10csr_scalarIifEvT_PKS0_") and not pattern.search("_Z12cupy_argsortIfEv")
