"""The ``cocktail`` command line: ``cocktail bench`` and ``cocktail formats``."""

from __future__ import annotations

import argparse
import json
import sys

from .errors import CocktailError


def _load_matrices(specs):
    """Matrices named on the command line: files (.mtx, .npz) or generated names such as laplace7_100."""
    from pathlib import Path

    from .bench.generators import by_name
    from .io import read_matrix

    out = {}
    for spec in specs:
        generated = by_name(spec)
        out[spec if generated is not None else Path(spec).name] = generated if generated is not None else read_matrix(spec)
    return out


def _bench_matrices(args) -> dict:
    from .bench import suites
    from .bench.builtin import builtin_matrices

    matrices = _load_matrices(args.matrices) if args.matrices else {}
    for suite in args.suite:
        matrices.update({m.name: suites.load(m) for m in suites.get(suite)})
    return matrices or builtin_matrices()


def _write_outputs(args, rows) -> None:
    from pathlib import Path

    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
    if args.csv:
        import csv

        with open(args.csv, "w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(rows[0]) if rows else [])
            writer.writeheader()
            writer.writerows(rows)
    if args.plot:
        from .bench import plots

        for path in plots.write_all(rows, args.plot):
            print(f"cocktail bench: wrote {path}", file=sys.stderr)


def _bench(args) -> int:
    from . import formats
    from ._xp import cuda_available
    from .bench import report
    from .bench.progress import reporter
    from .bench.provenance import provenance

    names = formats.names() if args.formats == "all" else [f.strip() for f in args.formats.split(",") if f.strip()]
    for name in names:
        formats.get(name)  # an unknown name fails before any work
    matrices = _bench_matrices(args)
    on_gpu = cuda_available() and not args.cpu
    if on_gpu:
        from .bench import gpu
        from .kernels.device import current

        repeat = args.repeat or 200
        total = len(matrices) * len(gpu.methods_for(names, args.all_kernels))
        print(f"cocktail bench: {current().name}; CUDA events, median of {repeat}", file=sys.stderr)
        with reporter(total, args.verbose) as progress:
            records = gpu.run(matrices, names, dtype=args.dtype, repeat=repeat, all_kernels=args.all_kernels,
                              progress=progress)
        title = f"GPU SpMV on {current().name} ({args.dtype}, median of {repeat})"
    else:
        from .bench import cpu

        repeat = args.repeat or 20
        why = "--cpu given" if args.cpu else "no GPU found"
        print(f"cocktail bench: {why}; timing the CPU reference executor", file=sys.stderr)
        with reporter(len(matrices) * len(names), args.verbose) as progress:
            records = cpu.run(matrices, names, dtype=args.dtype, repeat=repeat, progress=progress)
        title = f"CPU reference SpMV ({args.dtype}, median of {repeat})"
    info = provenance(gpu=on_gpu)
    for r in records:
        for key, value in info.items():
            setattr(r, key, value)
    report.print_table(records, title=title)
    _write_outputs(args, [r.as_dict() for r in records])
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
    bench.add_argument("matrices", nargs="*",
                       help="matrix files, or generated Laplacians named laplace<points>_<k> (points 3, 5, 9, 7, 27; "
                            "k grid points per side); default: the built-in matrices")
    bench.add_argument("--suite", action="append", default=[], metavar="NAME",
                       help="add a benchmark suite's matrices (repeatable): structured, williams, cocktail, default")
    bench.add_argument("--formats", default="all", help="comma-separated format names (default: all)")
    bench.add_argument("--dtype", choices=("float32", "float64"), default="float64", help="value dtype")
    bench.add_argument("--repeat", type=int, default=None,
                       help="timed repetitions per measurement, median reported (default 200 on the GPU, 20 on the CPU)")
    bench.add_argument("--all-kernels", action="store_true", help="on the GPU, time every kernel of each format")
    bench.add_argument("--cpu", action="store_true", help="time the CPU reference executor even when a GPU is present")
    bench.add_argument("--json", metavar="PATH", help="also write the records as JSON")
    bench.add_argument("--csv", metavar="PATH", help="also write the records as CSV")
    bench.add_argument("--plot", metavar="DIR", help="write PNG plots (GFLOP/s bars, performance profile, bandwidth)")
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
