"""The layering rule, read off the source: formats and reference never import the tuning layer or
``format="auto"``, and no layer imports one above it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src"
LOWEST_LAYERS = ("cocktail/formats", "cocktail/reference")
FORBIDDEN = ("cocktail.tuning", "cocktail.auto")


def module_name(path: Path) -> str:
    """Dotted name of the module at ``path`` under ``SRC``."""
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def import_target(node: ast.ImportFrom, package: str) -> str:
    """The absolute module a ``from ... import`` statement in ``package`` names (relative imports resolved)."""
    if not node.level:
        return node.module or ""
    base = package.split(".")
    base = base[:len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imported_modules(source: str, module: str, is_package: bool) -> set[str]:
    """Absolute names of every module imported anywhere in ``source`` (relative imports resolved;
    ``from X import y`` yields both ``X`` and ``X.y``, since ``y`` may be a submodule)."""
    package = module if is_package else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            target = import_target(node, package)
            found.add(target)
            found.update(f"{target}.{alias.name}" for alias in node.names)
    return found


def imports_tuning(names: set[str]) -> list[str]:
    return sorted(n for n in names for top in FORBIDDEN if n == top or n.startswith(top + "."))


def lowest_layer_files():
    return sorted(p for layer in LOWEST_LAYERS for p in (SRC / layer).rglob("*.py"))


@pytest.mark.parametrize("snippet, module, bad", [
    ("from ..tuning.hyb import rule", "cocktail.formats.hyb", True),
    ("from .. import tuning", "cocktail.formats.hyb", True),
    ("from ..tuning import pkt as rules", "cocktail.formats.pkt", True),
    ("def f():\n    from ...tuning import hyb\n", "cocktail.formats.sub.x", True),
    ("import cocktail.auto.fixed_rule", "cocktail.reference.csr", True),
    ("from cocktail import tuning", "cocktail.reference.csr", True),
    ("from .._xp import get_xp", "cocktail.formats.hyb", False),
    ("from . import register", "cocktail.reference.csr", False),
    ("from .tuning_notes import x", "cocktail.formats.hyb", False),
])
def test_the_import_reader(snippet, module, bad):
    assert bool(imports_tuning(imported_modules(snippet, module, False))) is bad


def test_formats_and_reference_do_not_import_tuning():
    files = lowest_layer_files()
    assert len(files) > 20  # both packages were found
    offenders = {}
    for path in files:
        module = module_name(path)
        names = imported_modules(path.read_text(), module, path.name == "__init__.py")
        if imports_tuning(names):
            offenders[str(path.relative_to(SRC))] = imports_tuning(names)
    assert not offenders, (
        f"the formats and reference layers must not import {FORBIDDEN} (a format receives its rule "
        f"from the layer above): {offenders}"
    )


#: Each package (or module) and the packages above it that it must never import (lowest layers first).
_MATRIX_AND_UP = ("cocktail.auto", "cocktail.describe", "cocktail.matrix", "cocktail.bound", "cocktail.bench",
                  "cocktail.cli", "cocktail.cli_calibrate", "cocktail.cli_describe", "cocktail.cli_inputs")
#: The measuring helpers above the kernels (they launch the spin kernel, name the device) and below the planner.
_MEASURING = ("cocktail.timing", "cocktail.provenance")
ABOVE = {
    "cocktail/registry.py": ("cocktail.formats", "cocktail.reference", "cocktail.kernels", "cocktail.tuning",
                             "cocktail.executors", "cocktail.io", "cocktail.validate", *_MEASURING, *_MATRIX_AND_UP),
    "cocktail/_memory.py": ("cocktail.formats", "cocktail.reference", "cocktail.kernels", "cocktail.tuning",
                            "cocktail.executors", "cocktail.io", "cocktail.mmcheck", "cocktail.validate",
                            *_MEASURING, *_MATRIX_AND_UP),
    "cocktail/mmcheck.py": ("cocktail.formats", "cocktail.kernels", "cocktail.tuning", "cocktail.executors",
                            "cocktail.io", *_MEASURING, *_MATRIX_AND_UP),
    "cocktail/io.py": ("cocktail.formats", "cocktail.kernels", "cocktail.tuning", "cocktail.executors",
                       *_MEASURING, *_MATRIX_AND_UP),
    "cocktail/timing.py": ("cocktail.tuning", "cocktail.executors", "cocktail.io", *_MATRIX_AND_UP),
    "cocktail/provenance.py": ("cocktail.tuning", "cocktail.executors", "cocktail.io", *_MATRIX_AND_UP),
    "cocktail/formats": ("cocktail.kernels", "cocktail.tuning", "cocktail.executors", "cocktail.io", *_MEASURING,
                         *_MATRIX_AND_UP),
    "cocktail/reference": ("cocktail.kernels", "cocktail.tuning", "cocktail.executors", "cocktail.io",
                           *_MEASURING, *_MATRIX_AND_UP),
    "cocktail/kernels": ("cocktail.tuning", "cocktail.executors", "cocktail.io", *_MEASURING, *_MATRIX_AND_UP),
    "cocktail/tuning": ("cocktail.executors", "cocktail.io", *_MEASURING, *_MATRIX_AND_UP),
    "cocktail/executors": ("cocktail.io", *_MEASURING, *_MATRIX_AND_UP),
    "cocktail/auto": ("cocktail.io", *_MATRIX_AND_UP[1:]),
    "cocktail/describe.py": ("cocktail.executors", "cocktail.io", *_MATRIX_AND_UP[2:]),
    # the parts SparseMatrix is made of: below the class itself
    "cocktail/matrix_operands.py": _MATRIX_AND_UP,
    "cocktail/matrix_derived.py": _MATRIX_AND_UP,
    "cocktail/matrix_inspection.py": ("cocktail.auto", *_MATRIX_AND_UP[2:]),
    "cocktail/matrix_products.py": ("cocktail.auto", "cocktail.describe", "cocktail.matrix", *_MATRIX_AND_UP[4:]),
}


@pytest.mark.parametrize("package", sorted(ABOVE))
def test_no_layer_imports_one_above_it(package):
    offenders = {}
    root = SRC / package
    for path in [root] if root.is_file() else sorted(root.rglob("*.py")):
        names = imported_modules(path.read_text(), module_name(path), path.name == "__init__.py")
        bad = sorted(n for n in names for top in ABOVE[package] if n == top or n.startswith(top + "."))
        if bad:
            offenders[str(path.relative_to(SRC))] = bad
    assert not offenders, f"{package} imports a layer above it: {offenders}"


def cocktail_imports(path: Path):
    """``(line, module, name)`` of every ``from cocktail... import name`` in the file at ``path``, relative
    imports resolved, wherever it stands (in a function body too: imports the CPU tests never run)."""
    module = module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            target = import_target(node, package)
            if target == "cocktail" or target.startswith("cocktail."):
                for alias in node.names:
                    yield node.lineno, target, alias.name


def test_every_import_of_the_package_resolves():
    import importlib
    import importlib.util

    broken = []
    for path in sorted((SRC / "cocktail").rglob("*.py")):
        for line, target, name in cocktail_imports(path):
            try:
                mod = importlib.import_module(target)
            except ImportError as exc:
                broken.append(f"{path.relative_to(SRC)}:{line}: {target} ({exc})")
                continue
            if not hasattr(mod, name) and importlib.util.find_spec(f"{target}.{name}") is None:
                broken.append(f"{path.relative_to(SRC)}:{line}: {target} has no {name}")
    assert not broken, "\n".join(broken)
