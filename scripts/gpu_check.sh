#!/usr/bin/env bash
# Run on the GPU machine from the repository root: GPU tests, memcheck, and benchmarks.
# Usage: bash scripts/gpu_check.sh [tests|shards|large|memcheck|default|full|all]  (logs under $OUT, default ./gpu_out)
#   shards:   the GPU tests in SHARDS pytest processes side by side (default 8; tests/conftest.py's COCKTAIL_SHARD),
#             with SPREAD=1 spread over the machine's GPUs (each shard sees one, so the tests of several ranks
#             skip: scripts/distributed_runs.sh runs those),
#             each cut at LIMIT seconds (default 540), with the summary line of each and their sum: the whole
#             `pytest -m gpu` inside one 10-minute device call (about 7 minutes on an H100)
#   large:    the tests past int32 (COCKTAIL_LARGE_TESTS=1: tens of GB of GPU memory)
#   memcheck: scripts/sanitize.sh memcheck (all three tools: bash scripts/sanitize.sh)
#   default: `cocktail bench` with no arguments, timed from an empty matrix cache
#   full:    every suite, float32 and float64, every kernel (DTYPES, SUITES override), JSON and plots
set -uo pipefail
OUT=${OUT:-gpu_out}
mkdir -p "$OUT"
export PYTHONPATH=$PWD/src:${PYTHONPATH:-} PYTHONUNBUFFERED=1
what=${1:-all}

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$OUT/gpu.txt"
python3 -c "import cupy, numpy, scipy; print('cupy', cupy.__version__, 'cuda', cupy.cuda.runtime.runtimeGetVersion(), 'numpy', numpy.__version__, 'scipy', scipy.__version__)" | tee -a "$OUT/gpu.txt"
python3 -c "import torch; print('torch', torch.__version__)" 2>/dev/null | tee -a "$OUT/gpu.txt"
echo "commit ${COCKTAIL_COMMIT:-$(git rev-parse HEAD 2>/dev/null)}" | tee -a "$OUT/gpu.txt"

if [[ $what == tests || $what == all ]]; then
  python3 -m pytest -m gpu -q -p no:cacheprovider --maxfail=30 2>&1 | tee "$OUT/pytest_gpu.log" | tail -40
fi
if [[ $what == shards ]]; then
  SHARDS=${SHARDS:-8}; GPUS=$(nvidia-smi -L | wc -l)
  for i in $(seq 0 $((SHARDS - 1))); do
    if [[ ${SPREAD:-0} == 1 ]]; then export CUDA_VISIBLE_DEVICES=$((i % GPUS)); fi
    COCKTAIL_SHARD="$i/$SHARDS" timeout "${LIMIT:-540}" python3 -m pytest -m gpu -q -rfE -p no:cacheprovider \
      --maxfail=30 > "$OUT/pytest_gpu_shard$i.log" 2>&1 &
  done
  wait
  for i in $(seq 0 $((SHARDS - 1))); do
    echo "shard $i/$SHARDS: $(tail -1 "$OUT/pytest_gpu_shard$i.log")"
  done | tee "$OUT/pytest_gpu.log"
  # the failures by name in the output (a call brings back 8 files at most: the logs go packed, one file)
  grep -hE "^(FAILED|ERROR) " "$OUT"/pytest_gpu_shard*.log | tee -a "$OUT/pytest_gpu.log"
  # the sum of the shards' counts: one summary line for the whole run
  tail -qn1 "$OUT"/pytest_gpu_shard*.log | grep -oE '[0-9]+ (passed|failed|skipped|errors?|deselected)' \
    | awk '{n[$2] += $1} END {for (k in n) printf "%d %s  ", n[k], k; print ""}' | tee -a "$OUT/pytest_gpu.log"
  tar czf "$OUT/pytest_gpu_shards.tgz" -C "$OUT" $(cd "$OUT" && ls pytest_gpu_shard*.log) && rm -f "$OUT"/pytest_gpu_shard*.log
fi
if [[ $what == large || $what == all ]]; then
  COCKTAIL_LARGE_TESTS=1 python3 -m pytest -q -p no:cacheprovider -rs tests/test_gpu_large.py 2>&1 | tee "$OUT/large.log" | tail -15
fi
if [[ $what == memcheck || $what == all ]]; then
  OUT="$OUT/sanitize" bash scripts/sanitize.sh memcheck | tail -40
fi
if [[ $what == default || $what == all ]]; then
  rm -rf /tmp/cocktail_empty_cache
  start=$(date +%s)
  COCKTAIL_CACHE=/tmp/cocktail_empty_cache python3 -m cocktail.cli bench --json "$OUT/default.json" \
    > "$OUT/default.log" 2>&1
  echo "cocktail bench (no arguments): exit $?, $(( $(date +%s) - start )) s wall, empty cache" | tee -a "$OUT/default.log"
  tail -60 "$OUT/default.log"
fi
if [[ $what == full ]]; then
  # one run per suite and dtype, so a run cut short keeps the finished ones; packed into $OUT/full.tgz
  mkdir -p /tmp/full
  for dtype in ${DTYPES:-float64 float32}; do
    for suite in ${SUITES:-structured williams cocktail}; do
      python3 -m cocktail.cli bench --suite "$suite" --all-kernels --dtype "$dtype" \
        --json "/tmp/full/${suite}_$dtype.json" > "/tmp/full/${suite}_$dtype.log" 2>&1
      echo "full $suite $dtype: exit $? at $(date +%T)" | tee -a "/tmp/full/${suite}_$dtype.log"
      tar czf "$OUT/full.tgz" -C /tmp/full .
    done
  done
fi
