"""``cocktail calibrate``: measure this GPU's device profile for ``format='auto'`` (``--spmm``: its block products'
samples; ``--check``: each variant's prediction error off the calibration grid)."""

from __future__ import annotations

import json
import sys

from .cli_inputs import _split


def _calibrate(args) -> int:
    """``cocktail calibrate``: write this GPU's device profile."""
    from pathlib import Path

    from .arrays import cuda_available
    from .auto import calibration
    from .bench.output.progress import counter
    from .auto import profile as profiles
    from .auto import variants

    if not cuda_available():
        print("cocktail: error: calibrate measures a GPU, and CuPy sees none", file=sys.stderr)
        return 2
    if args.spmm or args.formats:
        return _calibrate_spmm(args)
    only = variants.parse(args.variants) if args.variants else None  # ValueError names an unknown key
    if args.check:
        return _calibrate_check(args, only)
    if args.merge_into and not only:
        print("cocktail: error: --merge-into needs --variants (the variants whose samples it replaces)",
              file=sys.stderr)
        return 2
    if args.patterns != "all" and not (args.out or args.merge_into):
        print("cocktail: error: --patterns own or scattered measures part of a profile: give --merge-into or --out "
              "(this GPU's profile would hold nothing else)", file=sys.stderr)
        return 2
    base = profiles.Profile.load(args.merge_into) if args.merge_into else None
    out = Path(args.out) if args.out else None
    if base is not None and out is None:  # the partial run is not this GPU's profile: keep it apart
        import tempfile

        out = Path(tempfile.mkdtemp(prefix="cocktail-calibrate-")) / "samples.json"
    with counter("calibrate") as progress:
        prof = calibration.run("quick" if args.quick else "full", tuple(_split(args.dtype)), only, args.restart,
                               progress, out, args.patterns)
    count = sum(len(v) for d in prof.samples.values() for v in d.values())
    print(f"profile of {prof.device['name']}: {count} samples, launch cost "
          + ", ".join(f"{dt} {us:.2f} us" for dt, us in prof.launch_us.items()) + f"\nwritten to {prof.source}")
    if base is not None:
        profiles.merged(base, prof, only, args.patterns).save(args.merge_into)
        profiles.forget()
        print(f"samples of {', '.join(only)} merged into {args.merge_into}")
    return 0


def _calibrate_spmm(args) -> int:
    """``cocktail calibrate --spmm``: the SpMM samples of this GPU's profile (or of ``--merge-into``'s)."""
    from .auto import block_calibration
    from .bench.output.progress import counter

    if not args.spmm or args.check or args.variants or args.out or args.patterns != "all":
        print("cocktail: error: --formats goes with --spmm, which takes none of --check, --variants, --out, "
              "--patterns", file=sys.stderr)
        return 2
    only = _split(args.formats) if args.formats else None
    with counter("calibrate --spmm") as progress:
        section = block_calibration.run("quick" if args.quick else "full", tuple(_split(args.dtype)), only,
                                        args.restart, progress)
    prof = block_calibration.merge(section, args.merge_into)
    count = sum(len(rows) for by_key in section["ratios"].values() for by_layout in by_key.values()
                for rows in by_layout.values())
    print(f"SpMM samples of {prof.device['name']}: {count} ratios, transposing copy "
          + ", ".join(f"{dt} {gbps:.0f} GB/s" for dt, gbps in section["transpose_gbps"].items())
          + f"\nwritten to {prof.source}")
    return 0


def _calibrate_check(args, only) -> int:
    """``cocktail calibrate --check``: each variant's prediction error off the calibration grid."""
    from pathlib import Path

    from .auto import calibration
    from .bench.output.progress import counter
    from .auto import profile as profiles

    prof = profiles.Profile.load(args.profile) if args.profile else profiles.for_device(profiles.current_device())
    if prof is None:
        print("cocktail: error: no device profile to check; run cocktail calibrate first", file=sys.stderr)
        return 2
    with counter("calibrate --check") as progress:
        rows = calibration.check(prof, "quick" if args.quick else "full", tuple(_split(args.dtype)), only, progress)
    print(f"prediction error of {prof.source} on {len(rows)} variant and dtype pairs, off the calibration grid "
          "(|predicted / measured - 1|)")
    print(f"{'dtype':8} {'variant':24} {'points':>6} {'median':>7} {'worst':>7}  worst at")
    for r in sorted(rows, key=lambda r: (r.dtype, -r.median_error)):
        print(f"{r.dtype:8} {r.variant:24} {r.points:6d} {r.median_error:7.1%} {r.worst_error:7.1%}  {r.worst_point}")
    if args.json:
        Path(args.json).write_text(json.dumps([r.to_json() for r in rows], indent=1))
    return 0
