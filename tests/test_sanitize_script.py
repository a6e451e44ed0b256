"""scripts/sanitize.sh instruments Cocktail's kernels through a name filter: the filter must name them all."""

from __future__ import annotations

import re
import sys
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


def test_coverage_merges_runs_with_different_shard_counts(tmp_path):
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import sanitize_coverage
    finally:
        sys.path.pop(0)
    first = tmp_path / "first.txt"
    first.write_text(
        "# header\n"
        "racecheck products shard 0/2: RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings); 10 passed in 3.0s; ok\n"
        "racecheck products shard 1/2: no summary; no pytest summary; CUT at 300s\n"
        "memcheck oom shard 0/1: ERROR SUMMARY: 2 errors; 3 passed, 1 failed in 2.0s; exit 99\n")
    second = tmp_path / "second.txt"
    second.write_text(
        "racecheck products shard 1/4: RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings); 5 passed in 3.0s; ok\n"
        "racecheck products shard 3/4: RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings); 4 passed in 3.0s; ok\n"
        "racecheck products shard 0/2: RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings); 11 passed in 3.0s; ok\n")
    lines = sanitize_coverage.report(sanitize_coverage.merge([first]))
    assert lines[1] == ("racecheck products: 1 shards ended, 10 tests passed, 0 failed, 0 errors reported; "
                        "not covered: residues [1] of 2")
    lines = sanitize_coverage.report(sanitize_coverage.merge([first, second]))
    assert lines == [
        "memcheck oom: 1 shards ended, 3 tests passed, 1 failed, 2 errors reported; every test covered",
        # the cut 1/2 is 1/4 and 3/4; the second 0/2 replaces the first in the counts
        "racecheck products: 3 shards ended, 20 tests passed, 0 failed, 0 errors reported; every test covered",
    ]
