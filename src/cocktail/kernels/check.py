"""Compile-check every registered kernel instantiation without a GPU.

Uses NVRTC through ``cuda.bindings`` when installed (``pip install 'cocktail[nvrtc]'``),
else the machine's ``nvcc``.  ``python -m cocktail.kernels.check`` exits non-zero on any
error; CI runs it.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from . import block_names, get, get_block, names, source

DEFAULT_ARCH = "sm_90"


def _nvrtc_available() -> bool:
    try:
        from cuda.bindings import nvrtc  # noqa: F401
    except ImportError:
        return False
    return True


def backend_available(backend: str = "auto") -> str | None:
    """The compiler the check would use ('nvrtc' or 'nvcc'), or None when neither exists."""
    if backend in ("auto", "nvrtc") and _nvrtc_available():
        return "nvrtc"
    if backend in ("auto", "nvcc") and shutil.which("nvcc"):
        return "nvcc"
    return None


def _nvrtc_compile(code: str, expressions: list[str], options: list[str]) -> str | None:
    from cuda.bindings import nvrtc

    err, prog = nvrtc.nvrtcCreateProgram(code.encode(), b"kernel.cu", 0, [], [])
    try:
        for expr in expressions:
            (err,) = nvrtc.nvrtcAddNameExpression(prog, expr.encode())
            if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
                return f"cannot add name expression {expr}: {err}"
        opts = [o.encode() for o in options]
        (result,) = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
        _, size = nvrtc.nvrtcGetProgramLogSize(prog)
        log = bytearray(size)  # writable: NVRTC writes into it (a bytes object is immutable, and b" " is shared)
        nvrtc.nvrtcGetProgramLog(prog, log)
        if result != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            return log.decode(errors="replace").strip("\x00 \n")
        for expr in expressions:  # every instantiation must exist in the output
            err, _ = nvrtc.nvrtcGetLoweredName(prog, expr.encode())
            if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
                return f"instantiation {expr} missing: {err}"
        return None
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


def _nvcc_compile(code: str, expressions: list[str], options: list[str], arch: str) -> str | None:
    stub = "\nvoid cocktail_instantiate_all() {\n" + "".join(f"    (void)&{e};\n" for e in expressions) + "}\n"
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "kernel.cu"
        path.write_text(code + stub)
        proc = subprocess.run(["nvcc", f"-arch={arch}", *options, "-c", str(path), "-o", str(Path(tmp) / "k.o")],
                              capture_output=True, text=True)
    return None if proc.returncode == 0 else (proc.stderr or proc.stdout).strip()


def _compile(stem: str, expressions: list[str], backend: str, arch: str, ldg: bool) -> str | None:
    chosen = backend_available(backend)
    if chosen is None:
        raise RuntimeError("no CUDA compiler: install 'cocktail[nvrtc]' (NVRTC) or put nvcc on PATH")
    code, opts = source.assemble(stem), list(source.options(ldg))
    if chosen == "nvrtc":
        return _nvrtc_compile(code, expressions, opts + [f"--gpu-architecture={arch}"])
    return _nvcc_compile(code, expressions, opts, arch)


def _spec(name: str):
    """The kernel or block kernel registered as ``name``."""
    return get_block(name) if name in block_names() else get(name)


def template_arguments(expression: str) -> tuple[str, ...]:
    """The template arguments of an instantiation: ``'csr_vector<mixed<float, f16>, int, 2, true, 0>'`` gives
    ``('mixed<float, f16>', 'int', '2', 'true', '0')``."""
    inside = expression.partition("<")[2].rpartition(">")[0]
    arguments, depth, start = [], 0, 0
    for k, c in enumerate(inside):  # split at the commas outside nested brackets: mixed<float, f16> is one
        depth += {"<": 1, ">": -1}.get(c, 0)
        if c == "," and depth == 0:
            arguments.append(inside[start:k].strip())
            start = k + 1
    return tuple(arguments + [inside[start:].strip()]) if inside.strip() else ()


def covering_sample(expressions) -> list[str]:
    """A few of ``expressions`` in which every function and every value of each of its template arguments appears
    at least once (picked greedily, each adding the most not yet seen; in the given order): the default tests
    compile these, the exhaustive tier all of them."""
    def facts(e):
        function = e.partition("<")[0].strip()
        return {(function, None)} | {(function, k, a) for k, a in enumerate(template_arguments(e))}

    expressions = list(dict.fromkeys(expressions))
    seen = set().union(*map(facts, expressions)) if expressions else set()
    covered, chosen = set(), set()
    while covered != seen:
        best = max(expressions, key=lambda e: len(facts(e) - covered))
        chosen.add(best)
        covered |= facts(best)
    return [e for e in expressions if e in chosen]


def check_kernel(name: str, backend: str = "auto", arch: str = DEFAULT_ARCH, sample: bool = False) -> list[str]:
    """Compile every instantiation of kernel (or block kernel) ``name`` (with ``sample``, only
    :func:`covering_sample`'s), both read-only-path settings; return the errors."""
    spec = _spec(name)
    if spec.source is None:
        return []
    expressions = covering_sample(spec.all_expressions()) if sample else list(spec.all_expressions())
    errors = []
    for ldg in (True, False):
        err = _compile(spec.source, expressions, backend, arch, ldg)
        if err:
            errors.append(f"{name} (ldg={ldg}, {backend_available(backend)}): {err}")
    return errors


def check_helper(stem: str, backend: str = "auto", arch: str = DEFAULT_ARCH) -> list[str]:
    """Compile a helper source of ``source.HELPERS``; return the errors."""
    err = _compile(stem, list(source.HELPERS[stem]), backend, arch, ldg=False)
    return [f"{stem} ({backend_available(backend)}): {err}"] if err else []


def main(argv=None) -> int:
    """Check every registered kernel; print one line per kernel; exit 1 on any error."""
    parser = argparse.ArgumentParser(prog="python -m cocktail.kernels.check", description=__doc__)
    parser.add_argument("--backend", choices=("auto", "nvrtc", "nvcc"), default="auto")
    parser.add_argument("--arch", default=DEFAULT_ARCH, help="target architecture (default sm_90)")
    args = parser.parse_args(argv)
    chosen = backend_available(args.backend)
    if chosen is None:
        print("kernel check: no CUDA compiler (install 'cocktail[nvrtc]' or nvcc)", file=sys.stderr)
        return 1
    failed = 0
    for name in names() + block_names():
        errors = check_kernel(name, chosen, args.arch)
        spec = _spec(name)
        if spec.source:
            what = f"{2 * len(spec.all_expressions())} instantiations ({chosen}, {args.arch})"
        else:
            what = "the vendor's library: nothing to compile" if spec.vendor else "composed: its parts' kernels"
        print(f"{name:14s} {'FAIL' if errors else 'ok':4s} {what}")
        for e in errors:
            print(e, file=sys.stderr)
        failed += bool(errors)
    for stem, expressions in source.HELPERS.items():
        errors = check_helper(stem, chosen, args.arch)
        print(f"{stem:14s} {'FAIL' if errors else 'ok':4s} {len(expressions)} instantiations ({chosen}, {args.arch}; "
              f"helper)")
        for e in errors:
            print(e, file=sys.stderr)
        failed += bool(errors)
    total = len(names()) + len(block_names()) + len(source.HELPERS)
    print(f"{total - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
