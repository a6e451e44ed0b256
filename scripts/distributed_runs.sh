#!/usr/bin/env bash
# The distributed runs on one machine of several GPUs, from the checkout: the distributed GPU tests at all GPUs, then
# cocktail bench --distributed: the 27-point Laplacian strong (side SIDE, default 290: 2 GB a GPU at
# P = 4) and weak (side WSIDE a rank, default 180) and an R-MAT graph strong (scale SCALE, default 20), each at
# P = 1, 2 and every GPU. Records and logs go to OUTDIR (default distributed_runs/); tabled by
#   python scripts/scaling_table.py OUTDIR/*.json
# The ranks must be started by the mpiexec of the MPI that mpi4py was built with (MPIEXEC, default mpiexec; on a
# machine whose mpi4py uses Open MPI, as root: OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 and
# MPIEXEC="/usr/bin/mpiexec -x PYTHONPATH -x NCCL_NVLS_ENABLE"): another MPI's mpiexec starts ranks of one.
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH=$PWD/src${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}
M=${MPIEXEC:-mpiexec}; PY=$(python3 -c 'import sys; print(sys.executable)')
SIDE=${SIDE:-290}; WSIDE=${WSIDE:-180}; SCALE=${SCALE:-20}; R=${OUTDIR:-distributed_runs}; mkdir -p "$R"
NG=$(nvidia-smi -L | wc -l)
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; echo "commit ${COCKTAIL_COMMIT:-$(git rev-parse --short HEAD)}"; date -u;
  $M -n 1 $PY -c "import mpi4py, cupy; from mpi4py import MPI; from cupy.cuda import nccl; print('mpi4py', mpi4py.__version__, MPI.Get_library_version()[:30], 'nccl', nccl.get_version(), 'cupy', cupy.__version__)"; } > "$R/gpu.txt" 2>&1
cat "$R/gpu.txt"
# each step's output and records packed into $OUT/distributed_runs.tgz as it ends (a call brings back 8 files)
t() { tag=$1; lim=$2; shift 2; s=$(date +%s); timeout "$lim" "$@" > "$R/$tag.txt" 2>&1
  echo "rc=$? $tag in $(( $(date +%s) - s )) s" >> "$R/$tag.txt"; grep -v "^\s*$" "$R/$tag.txt" | tail -2
  [[ -n ${OUT:-} ]] && tar czf "$OUT/distributed_runs.tgz" -C "$R" .; }
t test_$NG 150 $M -n $NG $PY tests/distributed/mpi_distributed.py --device cuda
B="$PY -m cocktail bench --distributed --repeat 20"
for P in 1 2 $NG; do t strong_$P 200 $M -n $P $B --side $SIDE --json "$R/laplace27_${SIDE}_P$P.json"; done
t weak_1 120 $M -n 1 $B --side $WSIDE --json "$R/laplace27_${WSIDE}_P1.json"
for P in 2 $NG; do t weak_$P 150 $M -n $P $B --weak --side $WSIDE --json "$R/laplace27_weak_${WSIDE}_P$P.json"; done
for P in 1 2 $NG; do t rmat_$P 150 $M -n $P $B --matrix rmat --scale $SCALE --json "$R/rmat_${SCALE}_P$P.json"; done
t test_2 120 $M -n 2 $PY tests/distributed/mpi_distributed.py --device cuda
