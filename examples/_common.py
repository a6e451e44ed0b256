"""What the examples share: the device, timing of whole solves, provenance, the printed table and the JSON record.

Each example times "the usual way" (cupyx's CSR on the GPU, SciPy on the CPU, torch.sparse for the GCN)
against Cocktail end to end:

- ``setup`` builds what the way needs from the host matrix (the usual way: its sparse matrix on the
  device; Cocktail: a ``SparseMatrix``, which on the GPU plans the format), timed on its own;
- then one warm-up run of the whole solve (first products, transposes built on first use, block plans,
  CUDA graph captures), timed on its own;
- then ``--repeat`` timed runs; the table gives their median (and best), and the speedup is the usual
  way's median over Cocktail's.

Every run is synchronised with the device before the clock stops.  Every number printed or written to
``--json`` was measured by the run itself.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

try:
    import cocktail
except ImportError:  # a checkout that was not installed: use its src/
    sys.path.insert(0, str(ROOT / "src"))
    import cocktail

import numpy as np

warnings.filterwarnings("ignore", category=cocktail.CPUFallbackWarning)


#: The exit status of an example that cannot run in this install (a package it needs is missing): sysexits'
#: EX_UNAVAILABLE, distinct from a disagreement (1) and a usage error (2).
NEEDS_PACKAGE = 69


def needs(package: str, install: str, what: str):
    """Exit with :data:`NEEDS_PACKAGE`, saying that ``what`` needs ``package`` and how to install it."""
    print(f"{what} needs {package}, which is not installed here ({install}); nothing was run.", file=sys.stderr)
    raise SystemExit(NEEDS_PACKAGE)


class Disagreement(AssertionError):
    """The usual way and Cocktail gave answers that differ by more than the example allows."""


def parser(doc: str) -> argparse.ArgumentParser:
    """An ``ArgumentParser`` with the options every example has; ``doc`` is the script's docstring."""
    p = argparse.ArgumentParser(description=doc.split("\n\n")[0], epilog=doc.split("\n\n", 1)[-1],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", choices=("cpu", "cuda"), default=None,
                   help="where to run (default: the GPU when CuPy sees one, else the CPU)")
    p.add_argument("--small", action="store_true", help="a CPU-sized problem that runs in seconds")
    p.add_argument("--repeat", type=int, default=None,
                   help="timed runs of each way after one warm-up run (default 5; 3 with --small)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random right-hand sides, features and weights")
    p.add_argument("--json", metavar="PATH", help="also write every measured number to PATH")
    return p


def repeats(args) -> int:
    r = args.repeat if args.repeat is not None else (3 if args.small else 5)
    if r < 1:
        raise SystemExit("--repeat must be at least 1")
    return r


class Device:
    """The device the example runs on: its array module, synchronisation and host/device transfers."""

    def __init__(self, requested: str | None):
        from cocktail.arrays import cuda_available

        gpu = cuda_available()
        if requested == "cuda" and not gpu:
            raise SystemExit("--device cuda: CuPy sees no CUDA GPU (is cupy installed?); try --device cpu")
        self.name = requested or ("cuda" if gpu else "cpu")
        self.gpu = self.name == "cuda"
        if self.gpu:
            import cupy

            self.xp = cupy
        else:
            self.xp = np

    def sync(self) -> None:
        """Wait for everything queued on the GPU (nothing on the CPU)."""
        if self.gpu:
            self.xp.cuda.Device().synchronize()

    def array(self, a):
        """A host array on the device (a copy on the GPU, as it is on the CPU)."""
        return self.xp.asarray(a)

    def host(self, a) -> np.ndarray:
        return self.xp.asnumpy(a) if self.gpu else np.asarray(a)

    def csr(self, S):
        """The usual sparse matrix of a host CSR ``S``: cupyx's ``csr_matrix`` on the GPU, SciPy's ``csr_array`` on
        the CPU."""
        if self.gpu:
            import cupyx.scipy.sparse as csp

            return csp.csr_matrix(S)
        import scipy.sparse as sp

        return sp.csr_array(S)

    def description(self) -> str:
        if self.gpu:
            import cupy

            props = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
            return props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
        return cpu_model()


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine(device: Device) -> dict:
    """Where the numbers were taken: host, CPU, GPU, software versions, commit and date."""
    import scipy

    from cocktail.provenance import provenance

    info = provenance(device.gpu)  # gpu, cuda, cupy, commit ($COCKTAIL_COMMIT or git's HEAD), date (UTC)
    info.update(device=device.name, device_name=device.description(), host=platform.node(), cpu=cpu_model(),
                python=platform.python_version(), numpy=np.__version__, scipy=scipy.__version__,
                cocktail=cocktail.__version__)
    return info


def measure(device: Device, setup, solve, repeat: int):
    """Time one way: ``state = setup()``, one warm-up ``solve(state)``, then ``repeat`` timed ``solve(state)``.

    Returns ``(timing, state, result)``: ``timing`` holds ``setup_s``, ``warmup_s``, ``times_s``, ``best_s`` and
    ``median_s`` (each synchronised with the device); ``result`` is the last run's."""
    t0 = time.perf_counter()
    state = setup()
    device.sync()
    setup_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    result = solve(state)
    device.sync()
    warmup_s = time.perf_counter() - t0
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = solve(state)
        device.sync()
        times.append(time.perf_counter() - t0)
    timing = {"setup_s": setup_s, "warmup_s": warmup_s, "times_s": times, "best_s": min(times),
              "median_s": statistics.median(times)}
    return timing, state, result


def seconds(s: float) -> str:
    """A duration for the table: ``812 us``, ``12.3 ms``, ``4.56 s``."""
    if s < 1e-3:
        return f"{s * 1e6:.0f} us"
    if s < 1:
        return f"{s * 1e3:.3g} ms"
    return f"{s:.3g} s"


def table(headers, rows) -> str:
    """A plain fixed-width table (first column left-aligned, the others right-aligned)."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]

    def line(r):
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))

    return "\n".join([line(cells[0]), "  ".join("-" * w for w in widths)] + [line(r) for r in cells[1:]])


def plain(value):
    """``value`` with NumPy/CuPy scalars and 0-d arrays as Python numbers, for JSON."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if hasattr(value, "item") and getattr(value, "ndim", 0) == 0 and not isinstance(value, (str, bytes)):
        return value.item()
    return value


class Report:
    """The record of one run: what was run where, every measured number, the correctness checks."""

    def __init__(self, example: str, device: Device, args):
        self.data = {"example": example, "command": [Path(sys.argv[0]).name] + sys.argv[1:],
                     "machine": machine(device), "settings": {k: v for k, v in vars(args).items() if k != "json"},
                     "problem": {}, "results": {}, "checks": {}}
        self._json = args.json
        self._failed = []

    def check(self, name: str, ok: bool, **detail) -> None:
        """Record a correctness check; a failed one makes :meth:`finish` raise :class:`Disagreement`."""
        self.data["checks"][name] = {"ok": bool(ok), **plain(detail)}
        if not ok:
            self._failed.append(f"{name}: {plain(detail)}")

    def finish(self, title: str, headers, rows, notes=()) -> None:
        """Print the header, the table and the checks, write the JSON, and raise if a check failed."""
        m = self.data["machine"]
        print(f"\n{title}")
        print(f"{m['device_name']} ({m['device']}), cocktail {m['cocktail']} at {m['commit'][:12]}, {m['date']}")
        problem = ", ".join(f"{k} {v:,}" if isinstance(v, int) else f"{k} {v}"
                            for k, v in self.data["problem"].items())
        print(f"problem: {problem}\n")
        print(table(headers, rows))
        for note in notes:
            print(note)
        checks = ", ".join(f"{name} {'ok' if c['ok'] else 'FAILED'}" for name, c in self.data["checks"].items())
        print(f"checks: {checks}")
        if self._json:
            path = Path(self._json)
            if path.parent != Path(""):
                path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(plain(self.data), indent=2) + "\n")
            print(f"wrote {path}")
        if self._failed:
            raise Disagreement("the usual way and Cocktail disagree: " + "; ".join(self._failed))
