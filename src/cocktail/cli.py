"""The ``cocktail`` command line: ``cocktail bench`` and ``cocktail formats``."""

from __future__ import annotations

import argparse
import json
import sys

from .errors import CocktailError


def _bench(args) -> int:
    from pathlib import Path

    from . import formats
    from ._xp import cuda_available
    from .bench import cpu, report
    from .bench.builtin import builtin_matrices
    from .io import read_matrix

    names = formats.names() if args.formats == "all" else [f.strip() for f in args.formats.split(",") if f.strip()]
    for name in names:
        formats.get(name)  # an unknown name fails before any work
    if args.matrices:
        matrices = {Path(p).name: read_matrix(p) for p in args.matrices}
    else:
        matrices = builtin_matrices()
    gpu = "GPU found, but the GPU harness is not built yet" if cuda_available() else "no GPU found"
    print(f"cocktail bench: {gpu}; timing the CPU reference executor", file=sys.stderr)
    records = cpu.run(matrices, names, dtype=args.dtype, repeat=args.repeat,
                      progress=(lambda r: print(f"  {r.matrix} {r.method}", file=sys.stderr)) if args.verbose else None)
    report.print_table(records, title=f"CPU reference SpMV ({args.dtype}, median of {args.repeat})")
    if args.json:
        Path(args.json).write_text(json.dumps([r.as_dict() for r in records], indent=1) + "\n")
    return 0


def _formats(args) -> int:
    from . import formats

    for name in formats.names():
        cls = formats.get(name)
        params = ", ".join(f"{k}={getattr(v, '__name__', v)!s}" for k, v in cls.defaults.items()) or "-"
        doc = (cls.__doc__ or "").strip().splitlines()[0]
        print(f"{name:6s} {doc}\n       parameters: {params}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``cocktail`` command."""
    parser = argparse.ArgumentParser(prog="cocktail", description="Sparse matrix-vector products on NVIDIA GPUs.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    bench = sub.add_parser("bench", help="benchmark SpMV in every format",
                           description="Benchmark SpMV in every format on the built-in matrices or on "
                                       "Matrix Market (.mtx, .mtx.gz, .mtx.bz2) and SciPy .npz files.")
    bench.add_argument("matrices", nargs="*", help="matrix files (default: the built-in matrices)")
    bench.add_argument("--formats", default="all", help="comma-separated format names (default: all)")
    bench.add_argument("--dtype", choices=("float32", "float64"), default="float64", help="value dtype")
    bench.add_argument("--repeat", type=int, default=20, help="timed repetitions per measurement (median)")
    bench.add_argument("--json", metavar="PATH", help="also write the records as JSON")
    bench.add_argument("-v", "--verbose", action="store_true", help="print progress")
    bench.set_defaults(func=_bench)
    fmts = sub.add_parser("formats", help="list the storage formats and their parameters")
    fmts.set_defaults(func=_formats)
    return parser


def main(argv=None) -> int:
    """Entry point of the ``cocktail`` console script; returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (CocktailError, ValueError, TypeError) as exc:
        print(f"cocktail: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
