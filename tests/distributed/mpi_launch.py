"""How the tests start ``mpiexec``: the launcher of the MPI that mpi4py was built with, and its flags.

MPICH's ``mpiexec`` (what ``pip install mpich`` brings, and CI) passes the environment on by itself; Open MPI's
(the GPU machines' system MPI) needs ``-x`` for each variable, refuses root without two variables, and more ranks
than cores without ``--oversubscribe``.  A launcher of another MPI than mpi4py's starts every rank as a
communicator of one, so that is a skip naming both, not a run.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys

import pytest

#: Variables a rank needs from the test's environment (Open MPI forwards only those named).
FORWARD = ("PYTHONPATH", "NCCL_NVLS_ENABLE", "COCKTAIL_COMMIT", "CUPY_CACHE_DIR")


@functools.lru_cache(maxsize=None)
def _found():
    pytest.importorskip("mpi4py")
    from mpi4py import MPI

    path = shutil.which("mpiexec", path=os.path.dirname(sys.executable)) or shutil.which("mpiexec")
    if path is None:
        return None, "no mpiexec on PATH (pip install mpich)"
    version = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=60)
    launcher = "openmpi" if "Open MPI" in version.stdout + version.stderr or "OpenRTE" in version.stdout else "mpich"
    library = "openmpi" if "Open MPI" in MPI.Get_library_version() else "mpich"
    if launcher != library:
        return None, (f"{path} is {launcher}'s mpiexec but mpi4py uses {library}: its ranks would each run alone; "
                      "put the matching mpiexec first on PATH")
    return (path, launcher), None


def command(ranks: int, *argv, src_path: bool = False) -> tuple[list[str], dict]:
    """``(argv, env)`` running ``argv`` on ``ranks`` ranks with the matching mpiexec (skips where there is none);
    ``src_path``: the checkout's ``src`` first on the ranks' PYTHONPATH (for ``python -m cocktail``)."""
    found, why = _found()
    if found is None:
        pytest.skip(why)
    path, launcher = found
    env = dict(os.environ)
    if src_path:
        src = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "src")
        env["PYTHONPATH"] = os.pathsep.join([src] + [p for p in [env.get("PYTHONPATH")] if p])
    if launcher == "mpich":
        return [path, "-n", str(ranks), *argv], env
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    forward = [flag for name in FORWARD if name in env for flag in ("-x", name)]
    return [path, "--oversubscribe", *forward, "-n", str(ranks), *argv], env
