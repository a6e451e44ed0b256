"""``cocktail formats`` and ``cocktail explain``: the storage formats described, and how one matrix is stored and
why ``format='auto'`` picks its plan."""

from __future__ import annotations

import sys

from .cli_inputs import _load_matrices
from .errors import CocktailError


def _formats(args) -> int:
    """``cocktail formats [NAME]``: the table of formats, or one format's details."""
    from . import describe

    print(describe.format_details(args.name) if args.name else describe.formats_table())
    return 0


def _explain(args) -> int:
    """``cocktail explain FILE``: how SparseMatrix stores one matrix, and why format='auto' picks its plan."""
    from . import describe
    from .arrays import cuda_available
    from .matrix import SparseMatrix

    if args.device == "cuda" and not cuda_available():
        print("cocktail: error: --device cuda, and CuPy sees no GPU", file=sys.stderr)
        return 2
    device = args.device or ("cuda" if cuda_available() else "cpu")
    preview = device == "cpu" and args.format == "auto"
    profile = describe.shipped_profile(args.gpu) if preview else None  # an unknown name fails before any work
    params = _format_params(args.param)
    S = _load_matrices([args.file])[0].S
    try:
        A = SparseMatrix(S, format=args.format, device=device, dtype=args.dtype, **params)
    except (CocktailError, ValueError) as exc:  # a hint naming SparseMatrix's keywords: name --param instead
        hint = _explain_hint(str(exc), getattr(exc, "fill", None))
        if hint == str(exc):
            raise
        raise ValueError(hint) from None
    print(A.explain())
    if preview:
        print("\n" + describe.gpu_preview(A.storage.to_csr(), profile))
    return 0


#: SparseMatrix's keywords that ``cocktail explain`` sets from options of its own: ``--param`` refuses them.
EXPLAIN_OPTIONS = {"format": "--format", "device": "--device", "dtype": "--dtype"}


def _format_params(items) -> dict:
    """``--param KEY=VALUE`` options as SparseMatrix's keywords: a VALUE that reads as a Python literal (``60``,
    ``2.5``, ``None``, ``True``) is that value, any other is the text itself.  The keys explain sets from its
    own options (:data:`EXPLAIN_OPTIONS`) are refused, naming the option."""
    import ast

    params = {}
    for item in items:
        key, sep, text = item.partition("=")
        key, text = key.strip(), text.strip()
        if not sep or not key.isidentifier():
            raise ValueError(f"--param takes KEY=VALUE (e.g. --param max_fill=60), got {item!r}")
        if key in EXPLAIN_OPTIONS:
            raise ValueError(f"--param {key}=...: {key} is an option of cocktail explain: give "
                             f"{EXPLAIN_OPTIONS[key]} {text or 'VALUE'} instead")
        if key == "S":
            raise ValueError("--param S=...: S is the matrix, which FILE names")
        try:
            params[key] = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            params[key] = text
    return params


def _explain_hint(message: str, fill=None) -> str:
    """A format's refusal as ``cocktail explain`` words it: ``pass a larger max_fill=`` (SparseMatrix's keyword)
    becomes ``--param max_fill=N``, N the fill this matrix needs, rounded up."""
    import math
    import re

    def larger(match) -> str:
        key = match.group(2)
        value = math.ceil(fill) if key == "max_fill" and fill is not None and math.isfinite(fill) else "N"
        return f"pass a {match.group(1)} {key}: add --param {key}={value}"

    message = re.sub(r"\bpass a (larger|smaller) (\w+)=", larger, message)
    return re.sub(r"\bpass (\w+)=", r"pass --param \1=", message)
