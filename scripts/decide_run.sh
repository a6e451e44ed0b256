#!/usr/bin/env bash
# The end-to-end measurement (a build, then N products, against cupyx) on the GPU machine, from the repository root: end to end on the default suite in
# float64 and float32 (E2E_DTYPES), the 50-matrix workload, the construction probe (default and holdout suites).  Each step's
# output goes to $L (default /tmp/decide) and everything is packed into $OUT/decide.tgz after each step, so a
# run cut short keeps what finished.  docs/benchmarks/make_benchmarks_md.sh reads the unpacked folder.
set -uo pipefail
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
L=${L:-/tmp/decide}; OUT=${OUT:-gpu_out}; mkdir -p "$L" "$OUT"
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  python3 -c "import cupy, numpy, scipy; print('cupy', cupy.__version__, 'cuda', cupy.cuda.runtime.runtimeGetVersion(), 'numpy', numpy.__version__, 'scipy', scipy.__version__)"
  python3 -c "import torch; print('torch', torch.__version__)"
  echo "commit ${COCKTAIL_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null)}"
  echo "date $(date -u +%F)"; } > "$L/gpu.txt" 2>&1
pack() { tar czf "$OUT/decide.tgz" -C "$L" . ; }
t0=$(date +%s)
step() {
  local name=$1 limit=$2; shift 2
  timeout "$limit" "$@" > "$L/$name.txt" 2>&1
  echo "$name exit $? at $(( $(date +%s) - t0 )) s" >> "$L/gpu.txt"; pack
}
for dtype in ${E2E_DTYPES:-float64 float32}; do
  step e2e_default_$dtype 170 python3 -m cocktail.cli bench --end-to-end --dtype $dtype --json "$L/e2e_default_$dtype.json"
done
step workload_float64 100 python3 -m cocktail.cli bench --workload --dtype float64 --json "$L/workload_float64.json"
step probe 90 python3 scripts/construction_probe.py "$L/probe" default holdout
cat "$L/gpu.txt"
for f in "$L"/e2e_default_*.txt; do grep -A4 "^end to end from a host" "$f"; done
grep -A4 "^workload of" "$L/workload_float64.txt"
