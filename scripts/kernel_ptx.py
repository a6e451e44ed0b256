"""Compare the device code of two trees without a GPU: the PTX of every kernel instantiation.

    python scripts/kernel_ptx.py dump DIR          # PTX of each instantiation, block kernels too (NVRTC, sm_90,
                                                   # both ldg settings)
    python scripts/kernel_ptx.py compare OLD NEW   # identical entries; memory, barrier and shuffle ops

Run ``dump`` in each tree (``PYTHONPATH=<tree>/src``), then ``compare``. A refactor of the ``.cu``
files that leaves every entry identical changes neither results nor speed; one that does not is
measured on the GPU (the kernel's benchmark before and after). Needs ``cuda.bindings`` (NVRTC).
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

_ENTRY = re.compile(r"\.entry (\S+)\((.*?)\n\}\n", re.S)
_OP = re.compile(r"^\s*(?:@!?%p\d+\s+)?((?:ld|st|atom|red|bar|shfl|vote|membar|fence)\.[\w.]*)")


def _ptx(code: str, expressions: list[str], options: list[str]) -> tuple[str, dict[str, str]]:
    """The PTX of ``code`` and the lowered name of each expression."""
    from cuda.bindings import nvrtc

    _, prog = nvrtc.nvrtcCreateProgram(code.encode(), b"kernel.cu", 0, [], [])
    try:
        for e in expressions:
            nvrtc.nvrtcAddNameExpression(prog, e.encode())
        opts = [o.encode() for o in options]
        (result,) = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
        if result != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            raise RuntimeError(f"NVRTC failed: {result}")
        lowered = {e: nvrtc.nvrtcGetLoweredName(prog, e.encode())[1].decode() for e in expressions}
        _, size = nvrtc.nvrtcGetPTXSize(prog)
        buf = bytearray(size)
        nvrtc.nvrtcGetPTX(prog, buf)
    finally:
        nvrtc.nvrtcDestroyProgram(prog)
    return buf.decode(errors="replace").rstrip("\x00"), lowered


def dump(out: Path) -> int:
    """Write one file per instantiation (comments dropped) under ``out``; return how many."""
    from cocktail import kernels
    from cocktail.kernels import source

    out.mkdir(parents=True, exist_ok=True)
    specs = [kernels.get(n) for n in kernels.names()]
    specs += [kernels.get_block(n) for n in getattr(kernels, "block_names", list)()]  # the block kernels
    jobs = [(spec.name, spec.source, list(spec.all_expressions()), ldg) for spec in specs if spec.source
            for ldg in (True, False)]
    jobs += [(stem, stem, list(exprs), False) for stem, exprs in source.HELPERS.items()]
    count = 0
    for name, stem, expressions, ldg in jobs:
        ptx, lowered = _ptx(source.assemble(stem), expressions, list(source.options(ldg)) + ["--gpu-architecture=sm_90"])
        entries = {m.group(1): m.group(0) for m in _ENTRY.finditer(ptx)}
        for expression, low in lowered.items():
            body = "\n".join(line for line in entries[low].splitlines() if not line.strip().startswith("//"))
            (out / re.sub(r"[^A-Za-z0-9_]+", "_", f"{name}_{int(ldg)}_{expression}")[:200]).write_text(body)
            count += 1
    return count


def _ops(path: Path) -> Counter:
    return Counter(m.group(1) for line in path.read_text().splitlines()
                   if (m := _OP.match(line)) and not m.group(1).startswith("ld.param"))


def compare(old: Path, new: Path) -> int:
    """Print what differs between two dumps; return 0 when every entry is identical."""
    names_old, names_new = {p.name for p in old.iterdir()}, {p.name for p in new.iterdir()}
    if names_old != names_new:
        print(f"different instantiations: only old {sorted(names_old - names_new)[:5]}, "
              f"only new {sorted(names_new - names_old)[:5]}")
        return 1
    differ = [n for n in sorted(names_old) if (old / n).read_text() != (new / n).read_text()]
    ops = [n for n in differ if _ops(old / n) != _ops(new / n)]
    print(f"{len(names_old)} instantiations: {len(names_old) - len(differ)} identical, {len(differ)} differ "
          f"({len(ops)} in their memory, barrier or shuffle operations)")
    for n in differ[:20]:
        print("  differs:", n)
    return 1 if differ else 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "dump":
        print(dump(Path(sys.argv[2])), "instantiations")
    elif len(sys.argv) == 4 and sys.argv[1] == "compare":
        sys.exit(compare(Path(sys.argv[2]), Path(sys.argv[3])))
    else:
        sys.exit(__doc__)
