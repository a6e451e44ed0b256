"""The ``cocktail`` command line: ``cocktail bench``, ``cocktail report``, ``cocktail calibrate``, ``cocktail formats``
and ``cocktail explain``."""

from __future__ import annotations

import argparse
import json
import os
import sys

from .cli_calibrate import _calibrate
from .cli_describe import _explain, _formats
from .cli_inputs import _block_widths, _check_options, _methods, _problems
from .errors import CocktailError

#: What the exit statuses of ``cocktail bench`` mean (1: the reader of the output left, a broken pipe).
BENCH_EXIT = ("Exit status: 0 done; 2 an error (an option, a file, a matrix); 3 a product answered wrong (a relative "
              "error past the bound of its dtype: those records are listed under WRONG ANSWERS, first in the "
              "report, and left out of every speedup and count; the other results are printed and written as "
              "usual); 130 interrupted (--json keeps the records measured, for --resume).")


def _say(text: str) -> None:
    """Print a message on stderr, wrapped within the terminal's width (at most 100 columns; continuation
    lines indented)."""
    from .bench.output.progress import say

    say(text)


def _check_outputs(args) -> None:
    """Fail before the run, not after it, when an output cannot be written."""
    from pathlib import Path

    for option, path in (("--json", args.json), ("--csv", args.csv)):
        if path and (Path(path).is_dir() or not Path(path).resolve().parent.is_dir()):
            raise ValueError(f"{option} {path}: not a writable file path (is its directory there?)")
    if args.plot and Path(args.plot).exists() and not Path(args.plot).is_dir():
        raise ValueError(f"--plot {args.plot}: exists and is not a directory")
    if args.plot:
        _require_matplotlib("--plot")


def _require_matplotlib(option: str) -> None:
    """Refuse ``option`` before any work where matplotlib is missing (the plots are drawn after a whole run)."""
    import importlib.util

    if importlib.util.find_spec("matplotlib") is None:
        raise CocktailError(f"{option} needs matplotlib, which is not installed: pip install matplotlib "
                            "(the bench extra brings it)")


def _write_outputs(args, rows) -> None:
    """``--json`` and ``--csv``: the records, written before anything that may fail."""
    from pathlib import Path

    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
    if args.csv:
        import csv

        with open(args.csv, "w", newline="") as fh:
            fields = list(rows[0]) if rows else []
            writer = csv.DictWriter(fh, fieldnames=fields)
            writer.writeheader()
            writer.writerows({k: json.dumps(v) if isinstance(v, dict) else v for k, v in r.items()} for r in rows)


def _write_plots(args, rows) -> None:
    """``--plot``: the PNG plots of the records."""
    if args.plot:
        from .bench.output import plots

        for path in plots.write_all(rows, args.plot):
            print(f"cocktail bench: wrote {path}", file=sys.stderr)


def _settings(args, on_gpu: bool):
    from .bench.runner import Settings

    if not on_gpu:
        return Settings(repeat=args.repeat or 20, value_dtype=args.value_dtype)
    from .timing import copy_bandwidth
    from .kernels.device import current

    return Settings(repeat=args.repeat or 100, copy_gbps=copy_bandwidth(), l2_bytes=current().l2_bytes,
                    value_dtype=args.value_dtype)


def _default_suite_run(args) -> bool:
    """True when the command line names no matrices and no suite but ``default``."""
    return not args.matrices and list(args.suite) in ([], ["default"])


def _overhead(args, problems, dtypes) -> list:
    """The call-overhead section on the small matrix and ``problems``, on the GPU."""
    from .bench.measuring import overhead
    from .bench.measuring.overhead_ways import METHODS
    from .bench.output.progress import reporter

    if not any(p.name == overhead.SMALL_NAME for p in problems) and _default_suite_run(args):
        problems = [overhead.small_problem(), *problems]
    repeat = args.repeat or 100
    _say(f"cocktail bench: call overhead on {len(problems)} matrices: back to back (N calls, one stream sync; "
         f"N for about {overhead.TARGET_SECONDS * 1e3:.0f} ms, median of {overhead.LOOPS}) and one synchronous "
         f"call (median of at least {repeat})")
    with reporter(len(problems) * len(dtypes) * len(METHODS), args.verbose, len(METHODS)) as progress:
        return overhead.run(problems, dtypes, repeat=repeat, progress=progress)


def _end_to_end(args, problems, dtypes, on_gpu: bool) -> list:
    """The end-to-end section (a build and N products, ours against cupyx and torch; on the CPU SciPy) on
    ``problems``."""
    from .bench.measuring import end_to_end

    plan = end_to_end.plan_for(on_gpu)
    against = "cupyx and torch, from a host and from a device matrix" if on_gpu else "SciPy, from a host matrix"
    _say(f"cocktail bench: end to end on {len(problems)} matrices: build, then N = "
         f"{', '.join(f'{n:,}' for n in plan.marks)} products A @ x, cocktail-auto against {against} (the "
         f"decision cache off); medians of {plan.repeats}, at most {plan.budget_s:g} s of products a repetition")
    total = len(problems) * len(dtypes)
    count = iter(range(1, total + 1))

    def progress(p, dtype, records, seconds):
        ran = {r.method for r in records if r.total_us is not None}
        tried = list(dict.fromkeys(r.method for r in records))
        _say(f"cocktail bench: end to end {next(count)}/{total} {p.name} {dtype}: {len(ran)} of {len(tried)} "
             f"methods ran, {seconds:.1f} s")

    return end_to_end.run(problems, dtypes, on_gpu, plan, value_dtype=args.value_dtype, progress=progress)


def _workload(args, dtypes, on_gpu: bool) -> list:
    """The workload section (``--workload``): the 50 held-out matrices, each built from the host and multiplied
    20 times, ours against cupyx and torch (on the CPU: the CPU-size workload against SciPy)."""
    from .bench.measuring import workload

    plan = workload.Plan(repeats=args.repeat or workload.REPEATS)
    problems = workload.workload_problems(on_gpu)
    nnz = [p.S.nnz for p in problems]
    against = "cupyx and torch" if on_gpu else "SciPy (CPU size)"
    _say(f"cocktail bench: workload of {len(problems)} matrices ({min(nnz):,}-{max(nnz):,} nonzeros), each built "
         f"from the host then {plan.products} products A @ x, cocktail-auto against {against} (the decision "
         f"cache off); a warm-up pass, then {plan.repeats} timed pass{'es' * (plan.repeats != 1)}, their median")

    def progress(dtype, method, what, seconds):
        _say(f"cocktail bench: workload {dtype} {method} {what}: {seconds:.1f} s")

    return workload.run(problems, dtypes, on_gpu, plan, value_dtype=args.value_dtype, progress=progress)


def _check_workload(args, ks) -> None:
    """``--workload`` runs its own matrices and only its section: refuse what it would leave unused."""
    if args.end_to_end or args.overhead:
        other = "--end-to-end" if args.end_to_end else "--overhead"
        raise ValueError(f"--workload runs only the workload section; {other} runs another: give one")
    if ks != [1]:
        raise ValueError("--workload times SpMV jobs; --k applies to the SpMV section")
    if args.matrices or args.suite:
        raise ValueError("--workload runs its own fixed list of 50 matrices: give no matrices and no --suite")
    if args.resume or args.values != "stored":
        raise ValueError(f"--workload does not take {'--resume' if args.resume else '--values'}")


def _run_workload(args, dtypes, on_gpu: bool) -> int:
    """``cocktail bench --workload``: the workload section alone, its records written and printed."""
    from .bench.output import console, wrong_answers
    from .provenance import provenance

    _check_outputs(args)
    info = provenance(gpu=on_gpu)
    rows = [r.stamp(info).as_dict() for r in _workload(args, dtypes, on_gpu)]
    _write_outputs(args, rows)  # first: nothing measured is lost if a summary fails
    with wrong_answers.told_on_error(rows, "bench"):
        _write_plots(args, rows)
        console.print_report(rows, verbose=args.verbose)
    return wrong_answers.exit_status(rows, "bench")


def _journal(args):
    """The run's journal (:mod:`.bench.records.journal`) when it writes ``--json``, else None; says what it
    resumes or keeps aside."""
    if not args.json:
        if args.resume:
            raise ValueError("--resume continues the run that writes --json PATH: give the same --json")
        return None
    from .bench.records.journal import Journal

    kept = Journal(args.json, resume=args.resume)
    if args.resume:
        _say(f"cocktail bench: resuming {args.json}: {len(kept.done)} records kept in {kept.path}"
             if kept.done else f"cocktail bench: --resume: no interrupted run in {kept.path}; measuring all")
    elif kept.kept_aside is not None:
        _say(f"cocktail bench: an interrupted run's records were in {kept.path}; kept aside as "
             f"{kept.kept_aside} (--resume continues a run instead)")
    return kept


def _bench(args) -> int:
    if args.distributed:
        from .bench import distributed

        if len(_check_options(args)) != 1:  # one product is timed per run
            raise ValueError(f"--distributed times one dtype per run; --dtype {args.dtype} names several")
        return distributed.run(args)
    from .arrays import cuda_available
    from .bench import runner
    from .bench.output import console, wrong_answers
    from .bench.output.progress import reporter
    from .provenance import provenance

    dtypes = _check_options(args)
    ks = _block_widths(args.k)
    if args.end_to_end and args.no_end_to_end:
        raise ValueError("--end-to-end runs only the end-to-end section, which --no-end-to-end leaves out: give one")
    if args.end_to_end and ks != [1]:
        raise ValueError("--end-to-end times SpMV jobs; --k applies to the SpMV section")
    on_gpu = cuda_available() and not args.cpu
    if args.workload:
        _check_workload(args, ks)
        return _run_workload(args, dtypes, on_gpu)
    if ks != [1] and not on_gpu:
        raise ValueError("--k times block products on the GPU: " + ("it does not run with --cpu" if args.cpu else
                         "no GPU found (it needs CuPy and a CUDA device)"))
    if args.overhead and not on_gpu:
        raise ValueError("--overhead times calls on the GPU: " + ("it does not run with --cpu" if args.cpu else
                         "no GPU found (it needs CuPy and a CUDA device)"))
    _check_outputs(args)
    methods = [] if args.overhead or args.end_to_end else _methods(args, on_gpu)
    problems = _problems(args, on_gpu)  # first: a bad file is the only line printed
    if not on_gpu and methods:
        why = "--cpu given" if args.cpu else "no GPU found"
        _say(f"cocktail bench: {why}; timing each format's CPU executor, cocktail-auto and SciPy"
             + ("" if args.matrices or args.suite else " on the default suite shrunk to CPU size"))
    records, kept, info = [], None, provenance(gpu=on_gpu)
    if methods:
        settings = _settings(args, on_gpu)
        if on_gpu:
            from .kernels.device import current

            dev = current()
            _say(f"cocktail bench: {dev.name}; copy bandwidth {settings.copy_gbps:.0f} GB/s, L2 "
                 f"{dev.l2_bytes >> 20} MiB; kernel time: CUDA graph replay (back to back where capture is "
                 f"refused), call time: one synchronous call; medians of at least {settings.repeat}")
        kept = _journal(args)
        try:
            per_problem = sum(len(runner.methods_for(methods, k, args.all_kernels)) for k in ks)
            with reporter(len(problems) * len(dtypes) * per_problem, args.verbose, per_problem) as progress:
                records = runner.run(problems, methods, dtypes, settings, on_gpu, progress=progress, stamp=info,
                                     journal=kept, ks=ks, all_kernels=args.all_kernels)
        except KeyboardInterrupt:
            if kept is None:
                raise
            kept.close(finished=False)
            _say(f"cocktail bench: interrupted; the records measured are kept in {kept.path}: run the same "
                 f"command with --resume to finish")
            if kept.wrong:
                _say(f"cocktail bench: {kept.wrong} of the records kept answered wrong (past the error bound of "
                     f"their dtype); the finished run lists them first and exits 3")
            return 130
    if args.end_to_end or (_default_suite_run(args) and not (args.no_end_to_end or args.overhead)):
        records += [r.stamp(info) for r in _end_to_end(args, problems, dtypes, on_gpu)]
    if args.overhead or (on_gpu and _default_suite_run(args) and not (args.no_overhead or args.end_to_end)):
        records += [r.stamp(info) for r in _overhead(args, problems, dtypes)]
    rows = [r.as_dict() for r in records]
    _write_outputs(args, rows)  # first: nothing measured is lost if a summary fails
    if kept is not None:
        kept.close(finished=True)
    with wrong_answers.told_on_error(rows, "bench"):  # a failing plot or report still says what was wrong
        _write_plots(args, rows)
        console.print_report(rows, verbose=args.verbose)
    return wrong_answers.exit_status(rows, "bench")


def _report(args) -> int:
    from pathlib import Path

    from .bench.output import report, wrong_answers

    records = report.load(args.json)
    paths = []
    with wrong_answers.told_on_error(records, "report"):  # a failing plot or report still says what was wrong
        if args.plots and not args.terminal:
            from .bench.output import plots

            base = Path(args.out).parent if args.out else Path(".")
            paths = [str(Path(p).relative_to(base)) if Path(p).is_relative_to(base) else str(p)
                     for p in plots.write_all(records, args.plots)]
        status = report.render(args, records, paths)
    return status or wrong_answers.exit_status(records, "report")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``cocktail`` command."""
    parser = argparse.ArgumentParser(prog="cocktail", description="Sparse matrix-vector products on NVIDIA GPUs.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    bench = sub.add_parser(
        "bench", help="benchmark SpMV: our kernels against cuSPARSE, cupyx, torch and SciPy",
        description="Benchmark SpMV on benchmark suites, Matrix Market (.mtx, .mtx.gz, .mtx.bz2) or SciPy .npz "
                    "files. With no matrices and no --suite it runs the default suite, then the end-to-end "
                    "section (a build and N products) and, on the GPU, the call-overhead section (on a machine "
                    "without a GPU: the default suite shrunk to CPU size, timing each format's default CPU "
                    "executor, cocktail-auto and SciPy, and end to end cocktail-auto and SciPy).",
        epilog=BENCH_EXIT)
    bench.add_argument("matrices", nargs="*",
                       help="matrix files, generated Laplacians named laplace<points>_<k> (points 3, 5, 9, 7, 27; "
                            "k grid points per side), or random10k (the call-overhead section's small matrix)")
    spread = bench.add_argument_group(
        "several GPUs", "--distributed: under mpiexec -n P (one GPU per rank, or CPU ranks), time one "
        "row-partitioned product at this P: cocktail.distributed, halo moved by NCCL or MPI")
    spread.add_argument("--distributed", action="store_true",
                        help="time the distributed product of --matrix at the communicator's size")
    spread.add_argument("--matrix", choices=("laplace27", "rmat"), default="laplace27",
                        help="laplace27 (the 27-point Laplacian on a cube of --side points) or rmat (an R-MAT "
                             "graph of 2**--scale vertices)")
    spread.add_argument("--side", type=int, default=100, help="laplace27's points per side (default 100)")
    spread.add_argument("--scale", type=int, default=20, help="rmat's log2 vertices (default 20)")
    spread.add_argument("--weak", action="store_true",
                        help="weak scaling: the matrix grows with P (laplace27: side**3 * P rows; rmat: scale + "
                             "log2 P)")
    bench.add_argument("--suite", action="append", default=[], metavar="NAME",
                       help="add a suite's matrices (repeatable): structured, williams, cocktail, default, default-cpu, "
                            "holdout, holdout-cpu")
    bench.add_argument("--formats", default="all",
                       help="comma-separated formats whose kernels are timed (default: every format with a GPU "
                            "kernel; on the CPU every format)")
    bench.add_argument("--all-kernels", action="store_true",
                       help="time every kernel of each format, not only its default kernel")
    bench.add_argument("--methods", default="all",
                       help="comma-separated methods or groups: ours (the --formats kernels; on the CPU each "
                            "format's default CPU executor), reference (each format's reference executor on the "
                            "CPU; or one, e.g. reference:ell), cocktail-auto, cocktail-auto-own (GPU: our own kernels "
                            "only), cocktail-measured (GPU), auto (all three), cocktail-auto-T (GPU, SpMV: A.T @ u "
                            "through the transpose A.T builds), "
                            "cusparse (its four algorithms; cusparse-best is derived from them), baselines (cuSPARSE, cupyx, torch, scipy), or "
                            "single baselines such as cusparse-csr-alg1, "
                            "cupyx, torch, scipy; all (the default) is ours, auto and the baselines")
    bench.add_argument("--dtype", default="float64",
                       help="value dtypes, comma-separated: float16, bfloat16, float32, float64, complex64, complex128 "
                            "(default float64); a half dtype sums in float32 and is compared with cuSPARSE's half "
                            "SpMV; a complex run turns each entry by a phase of its own")
    bench.add_argument("--values", default="stored", choices=("stored", "pattern", "few"),
                       help="the matrices' own values (default); pattern: every entry 1 (the adjacency of each "
                            "matrix's pattern, named <name>:pattern), which format='auto' stores with no value per "
                            "entry; few: every entry one of 16 weights (named <name>:few), which csr_vi stores with a "
                            "one-byte code per entry")
    bench.add_argument("--value-dtype", default=None, metavar="DTYPE",
                       help="store our methods' values in this dtype, narrower than --dtype (float32 under float64; "
                            "float16 or bfloat16 under float32), products staying in --dtype; the baselines keep "
                            "the values in --dtype")
    bench.add_argument("--k", default="1", metavar="K[,K...]",
                       help="block widths: 1 (default) times SpMV; wider ones time each method's block product "
                            "A @ X of k vectors too (records of the spmm section), with cuSPARSE's SpMM per "
                            "algorithm and memory order, cocktail-auto-col (column-major blocks) and "
                            "cocktail-auto-spmvs (k separate SpMVs of the same plan), e.g. --k 1,4,16,64")
    bench.add_argument("--repeat", type=int, default=None,
                       help="least number of timed samples per figure, median reported (default 100 on the GPU, "
                            "20 on the CPU; more for tiny matrices)")
    bench.add_argument("--cpu", action="store_true", help="take the CPU path even when a GPU is present")
    bench.add_argument("--json", metavar="PATH",
                       help="also write the records as JSON (a list, one per measurement); each record also goes "
                            "to PATH.partial.jsonl as it is measured, removed when the run ends")
    bench.add_argument("--resume", action="store_true",
                       help="with --json PATH: continue the run that PATH.partial.jsonl kept, measuring only what "
                            "it lacks")
    bench.add_argument("--csv", metavar="PATH", help="also write the records as CSV")
    bench.add_argument("--plot", metavar="DIR",
                       help="write PNG plots (speedup over the baseline per suite, performance profile, bandwidth)")
    section = bench.add_mutually_exclusive_group()
    section.add_argument("--overhead", action="store_true",
                         help="run only the call-overhead section (GPU): per-call time of A.matvec(x, out=y), A @ x, "
                              "the bound product, cupyx, torch and cuSPARSE against an empty kernel launch and an "
                              "empty graph replay, on the small matrix random10k and the default suite, or on the "
                              "matrices and suites given")
    section.add_argument("--no-overhead", action="store_true",
                         help="leave out the call-overhead section that follows a GPU run of the default suite")
    section.add_argument("--end-to-end", action="store_true",
                         help="run only the end-to-end section: the whole job, SparseMatrix(S) (format='auto', the "
                              "decision cache off) then N = 1, 10, 100, 1,000, 10,000 products A @ x, against cupyx "
                              "and torch, from a host and from a device matrix (CPU: against SciPy, N up to 100), on "
                              "the default suite or the matrices and suites given")
    bench.add_argument("--workload", action="store_true",
                       help="run only the workload section: 50 held-out matrices of 1-10M nonzeros (a mix of "
                            "classes), each built from the host, SparseMatrix(S) with the decision cache off, then "
                            "20 products A @ x; the whole workload against cupyx and torch (CPU: the CPU-size "
                            "workload against SciPy), the median of 3 passes (--repeat)")
    bench.add_argument("--no-end-to-end", action="store_true",
                       help="leave out the end-to-end section that follows a run of the default suite")
    bench.add_argument("-v", "--verbose", action="store_true",
                       help="print a line per measurement, and after the answer every method's record, the suite "
                            "summaries and the call-time tables")
    bench.set_defaults(func=_bench)
    rep = sub.add_parser("report", help="render benchmark records (JSON) as a Markdown report, with plots, or as "
                                        "cocktail bench prints them (--terminal)",
                         description="Render the records that cocktail bench --json wrote as a Markdown report, "
                                     "or with --terminal as cocktail bench printed them.",
                         epilog="Exit status: 0 done; 2 an error; 3 the records hold a wrong answer (a relative "
                                "error past the bound of its dtype): the report is printed or written all the "
                                "same, those records listed under WRONG ANSWERS (Markdown: 'Wrong answers') and "
                                "left out of every speedup and count.")
    from .bench.output.report import add_arguments

    add_arguments(rep)
    rep.add_argument("--plots", metavar="DIR", help="also draw the plots into DIR and link them from the report")
    rep.set_defaults(func=_report)
    cal = sub.add_parser("calibrate", help="measure this GPU's device profile for format='auto' (clSpMV's "
                                           "offline benchmarking stage)",
                         description="Time every kernel variant on synthetic matrices (rows 2^10..2^21, entries per "
                                     "row 1..64 and more for lane-shared kernels) and write the device profile to "
                                     "the user cache directory. Resumes an interrupted run unless --restart.")
    cal.add_argument("--quick", action="store_true", help="a coarser grid: a few minutes")
    cal.add_argument("--dtype", default="float32,float64", help="value dtypes, comma-separated (default both)")
    cal.add_argument("--variants", default=None,
                     help="comma-separated variant keys to sample (default all), e.g. 'csr_scalar,sell(C=32,t=2)'; "
                          "'flat' for every flat variant")
    cal.add_argument("--patterns", default="all", choices=("all", "own", "scattered"),
                     help="sample each variant on its own pattern, the flat variants also on scattered columns "
                          "(all, the default), or only one of the two")
    cal.add_argument("--restart", action="store_true", help="discard the samples of an interrupted run")
    cal.add_argument("--check", action="store_true",
                     help="measure nothing into a profile: time the variants on synthetic matrices off the "
                          "calibration grid and report each one's prediction error under this GPU's profile "
                          "(or --profile)")
    cal.add_argument("--profile", metavar="PATH", help="with --check: the profile to check (default: this GPU's)")
    cal.add_argument("--json", metavar="PATH", help="with --check: also write the rows as JSON")
    cal.add_argument("--out", metavar="PATH", help="write the profile here instead of the user cache directory")
    cal.add_argument("--merge-into", metavar="PROFILE",
                     help="with --variants: also put the new samples of those variants into this profile of the same "
                          "GPU and grid (e.g. a shipped one), replacing its samples of them; with --spmm: put the "
                          "SpMM samples there instead of into this GPU's profile")
    cal.add_argument("--spmm", action="store_true",
                     help="sample only the block products (SpMM: each block kernel and cuSPARSE algorithm over k, "
                          "as a ratio to one SpMV) and add them to this GPU's profile (or --merge-into's)")
    cal.add_argument("--formats", default=None, metavar="LIST",
                     help="with --spmm: comma-separated formats to sample (default every one with a block kernel)")
    cal.set_defaults(func=_calibrate)
    fmts = sub.add_parser("formats", help="list the storage formats, when each wins, and their parameters",
                          description="With no NAME: one row per format. With NAME: its parameters, GPU "
                                      "kernels, byte model and layout.")
    fmts.add_argument("name", nargs="?", metavar="NAME", help="a format to describe in full")
    fmts.set_defaults(func=_formats)
    expl = sub.add_parser("explain", help="how a matrix would be stored, and why format='auto' picks its plan",
                          description="Read a matrix (.mtx, .mtx.gz, .npz, or a generated name such as "
                                      "laplace7_20), build SparseMatrix and print A.explain(). On a machine "
                                      "without a GPU it also shows what the GPU planner would pick.")
    expl.add_argument("file", metavar="FILE", help="matrix file or generated name (as cocktail bench takes)")
    expl.add_argument("--device", choices=("cpu", "cuda"), default=None,
                      help="where to build the matrix (default: the GPU when CuPy sees one, else the CPU)")
    expl.add_argument("--format", default="auto", help="storage format (default auto); see cocktail formats")
    expl.add_argument("--dtype", default=None, help="convert the values: float32, float64, complex64, complex128")
    expl.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                      help="a parameter of --format, as SparseMatrix takes it (repeatable), e.g. --param max_fill=60 "
                           "or --param width=None; cocktail formats NAME lists a format's parameters")
    expl.add_argument("--gpu", default="h100", metavar="NAME",
                      help="without a GPU: the shipped device profile the planner's preview uses (h100 or h200; "
                           "default h100)")
    expl.set_defaults(func=_explain)
    return parser


def main(argv=None) -> int:
    """Entry point of the ``cocktail`` console script; returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except BrokenPipeError:  # the reader left (`| head`): stop quietly, as other commands do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except (CocktailError, ValueError, TypeError, OSError) as exc:
        print(f"cocktail: error: {exc}", file=sys.stderr)
        return 2
    except ImportError as exc:  # an optional package this command needs (mpi4py for --distributed, ...)
        print(f"cocktail: error: this needs {exc.name or 'a package'}, which is not installed ({exc}); the README's "
              "extras table says which extra brings it", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
