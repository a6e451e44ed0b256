"""Hide optional packages from this process, as if they were not installed (``import name`` raises ImportError).

Used by tests/conftest.py (``COCKTAIL_TEST_HIDE``) and by tests/optional_fingerprint.py, before Cocktail is imported.
"""

from __future__ import annotations

import os
import sys

#: The optional packages Cocktail and its tests may import, by module name (pyproject's extras).
OPTIONAL = ("ml_dtypes", "torch", "rich", "matplotlib", "skfem", "pymetis", "mpi4py", "cuda", "cupy", "cupyx",
            "hypothesis")
#: The environment variable naming the packages to hide, comma-separated.
HIDE_VARIABLE = "COCKTAIL_TEST_HIDE"


def hide(names) -> None:
    """Make ``import name`` (and of its submodules) raise ImportError in this process for each of ``names``."""
    for name in names:
        for loaded in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
            del sys.modules[loaded]
        sys.modules[name] = None  # the import system's own mark for "not importable"


def hide_from_environment() -> list[str]:
    """Hide the packages ``COCKTAIL_TEST_HIDE`` names (an unknown name is an error, not a silent no-op)."""
    names = [n.strip() for n in os.environ.get(HIDE_VARIABLE, "").split(",") if n.strip()]
    unknown = sorted(set(names) - set(OPTIONAL))
    if unknown:
        raise SystemExit(f"{HIDE_VARIABLE}: {', '.join(unknown)} is not one of the optional packages {OPTIONAL}")
    hide(names)
    return names
