#!/usr/bin/env bash
# Run on the GPU machine from the repository root: GPU tests, memcheck, and kernel timings.
# Usage: bash scripts/gpu_check.sh [tests|memcheck|bench|all]  (logs under $OUT, default ./gpu_out)
set -uo pipefail
OUT=${OUT:-gpu_out}
mkdir -p "$OUT"
export PYTHONPATH=$PWD/src:${PYTHONPATH:-} PYTHONUNBUFFERED=1
what=${1:-all}

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$OUT/gpu.txt"
python3 -c "import cupy, numpy, scipy; print('cupy', cupy.__version__, 'cuda', cupy.cuda.runtime.runtimeGetVersion(), 'numpy', numpy.__version__, 'scipy', scipy.__version__)" | tee -a "$OUT/gpu.txt"
git rev-parse HEAD 2>/dev/null | tee -a "$OUT/gpu.txt"

if [[ $what == tests || $what == all ]]; then
  python3 -m pytest -m gpu -q -p no:cacheprovider --maxfail=30 2>&1 | tee "$OUT/pytest_gpu.log" | tail -40
fi
if [[ $what == memcheck || $what == all ]]; then
  COCKTAIL_NO_CUPY_POOL=1 compute-sanitizer --tool memcheck --print-limit 20 ${MEMCHECK_FLAGS:-} \
    python3 -m pytest -m gpu -q -p no:cacheprovider ${MEMCHECK_K:+-k "$MEMCHECK_K"} 2>&1 | tee "$OUT/memcheck.log" | tail -15
fi
if [[ $what == bench || $what == all ]]; then
  python3 -m cocktail.cli bench laplace7_100 laplace27_100 --formats csr,coo,dia,ell,hyb,pkt --all-kernels \
    --dtype float64 --repeat 200 --json "$OUT/laplace_float64.json" 2>&1 | tee "$OUT/bench.log" | tail -40
fi
