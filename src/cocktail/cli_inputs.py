"""What ``cocktail bench`` and ``cocktail explain`` read off the command line, checked before any work: the
matrices and suites (:func:`_problems`), the methods to time (:func:`_methods`), the dtypes and the options
that go with them (:func:`_check_options`) and the block widths (:func:`_block_widths`)."""

from __future__ import annotations


def _load_matrices(specs):
    """Problems named on the command line: files (.mtx, .npz), generated names such as laplace7_100, or
    the overhead section's small matrix."""
    from pathlib import Path

    from .bench.measuring import overhead
    from .bench.problems.families import REGULAR
    from .bench.problems.generators import by_name
    from .bench.runner import Problem
    from .io import read_matrix

    out = []
    for spec in specs:
        generated = by_name(spec)
        if spec == overhead.SMALL_NAME:
            out.append(overhead.small_problem())
        elif generated is not None:
            out.append(Problem("generated", spec, "generated Laplacian", generated, REGULAR))
        else:
            out.append(Problem("file", Path(spec).name, "file", read_matrix(spec)))
    return out


def _problems(args, on_gpu: bool) -> list:
    """The command line's matrices and suites; with neither, the default suite (CPU-sized without a GPU)."""
    from .bench.problems import suites
    from .bench.runner import Problem

    problems = _load_matrices(args.matrices)
    chosen = list(args.suite) or ([] if problems else ["default" if on_gpu else "default-cpu"])
    for name in chosen:
        problems += [Problem(name, m.name, m.kind, suites.load(m), m.family) for m in suites.get(name)]
    if args.values != "stored":
        from .bench.runner import few_values_of, pattern_of

        problems = [(pattern_of if args.values == "pattern" else few_values_of)(p) for p in problems]
    return problems


def _split(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def _methods(args, on_gpu: bool) -> list:
    """The methods to time, from ``--formats``, ``--all-kernels`` and ``--methods``.

    On the GPU, ``ours`` are the formats' kernels; on the CPU, each format's default CPU executor
    (labelled by the format); ``reference`` is each format's reference executor on the CPU.
    """
    from . import formats, kernels
    from .bench.measuring import baselines, methods

    if args.formats == "all":
        names = [f for f in formats.names() if formats.get(f).standalone and (not on_gpu or kernels.for_format(f))]
    else:
        names = _split(args.formats)
    for name in names:
        formats.get(name)  # an unknown name fails before any work
    ours = (methods.ours(names, args.all_kernels) if on_gpu else [methods.HostMethod(f) for f in names])
    auto = methods.AutoMethod(device="cuda" if on_gpu else "cpu")
    autos = [auto, methods.OWN, methods.MEASURED] if on_gpu else [auto]
    groups = {"ours": ours, "reference": [methods.ReferenceMethod(f) for f in names], "auto": autos,
              "cusparse": list(baselines.CUSPARSE), "baselines": list(baselines.BASELINES)}
    groups["all"] = groups["ours"] + groups["auto"] + groups["baselines"]  # the reference executors when named
    groups[auto.name] = [auto]
    groups[methods.MEASURED.name] = [methods.MEASURED]
    groups[methods.OWN.name] = [methods.OWN]
    groups[methods.TRANSPOSED.name] = [methods.TRANSPOSED]
    groups[baselines.CUSPARSE_BEST] = groups["cusparse"]  # derived from the four algorithms
    chosen = []
    for name in _split(args.methods):
        if name.startswith("reference:"):
            fmt = name.partition(":")[2]
            formats.get(fmt)
            chosen.append(methods.ReferenceMethod(fmt))
        elif name in groups:
            chosen += groups[name]
        else:
            chosen.append(_installed(baselines.get(name)))
    if not on_gpu:
        gpu_only = [m.name for m in chosen if m.needs_gpu]
        if gpu_only and "all" not in _split(args.methods):
            raise ValueError(f"{', '.join(gpu_only)}: GPU only; on the CPU the methods are the formats' CPU "
                             f"executors (ours), their reference executors (reference), cocktail-auto and scipy")
        chosen = [m for m in chosen if not m.needs_gpu]
    if not chosen:
        raise ValueError("no method to run: check --formats and --methods")
    return list(dict.fromkeys(chosen))


def _installed(method):
    """``method``, named alone by ``--methods``: refused before the run where the optional package it needs is
    missing (a whole run would record only that it did not run)."""
    import importlib.util

    package = getattr(method, "package", None)
    if package is not None and importlib.util.find_spec(package[0]) is None:
        raise ValueError(f"--methods {method.name} needs {package[1]}, which is not installed")
    return method


#: The dtypes ``cocktail bench --dtype`` takes (bfloat16 with ml_dtypes).
BENCH_DTYPES = ("float16", "bfloat16", "float32", "float64", "complex64", "complex128")


def _check_options(args) -> list[str]:
    """``--repeat`` and ``--dtype`` checked before any work; returns the dtypes."""
    if args.repeat is not None and args.repeat < 1:
        raise ValueError(f"--repeat must be at least 1, not {args.repeat}")
    dtypes = _split(args.dtype)
    if not dtypes:
        raise ValueError(f"--dtype names no dtype; choose among {', '.join(BENCH_DTYPES)}, comma-separated")
    for d in dtypes:
        if d not in BENCH_DTYPES:
            raise ValueError(f"unknown dtype {d!r}; choose among {', '.join(BENCH_DTYPES)}, comma-separated")
        if d == "bfloat16":
            from .precision import dtype_named

            dtype_named(d)  # names the missing ml_dtypes
    if args.value_dtype is not None:
        from .precision import dtype_named, stored_dtype

        for d in dtypes:
            if stored_dtype(dtype_named(d), args.value_dtype) == dtype_named(d):
                raise ValueError(f"--value-dtype {args.value_dtype} is the matrix dtype {d}: leave it out")
    return dtypes


def _block_widths(text: str) -> list[int]:
    """``--k``: the block widths to time, 1 (the SpMV) first when given; each a positive integer."""
    ks = []
    for part in _split(text):
        try:
            k = int(part)
        except ValueError:
            raise ValueError(f"--k takes positive integers, comma-separated (1 is the SpMV), got {part!r}") from None
        if k < 1:
            raise ValueError(f"--k takes positive integers, comma-separated (1 is the SpMV), got {k}")
        ks.append(k)
    if not ks:
        raise ValueError("--k names no block width; for example --k 1,4,16,64")
    return sorted(set(ks))
