#!/usr/bin/env bash
# compute-sanitizer over the whole GPU test suite, with CuPy's memory pool off (a pooled block
# would hide an out-of-bounds access inside it).  Run on the GPU machine from the repository root.
#
# Usage: bash scripts/sanitize.sh [memcheck] [racecheck] [synccheck]     (default: all three)
#   OUT=dir       logs and the summary (default ./sanitize_out)
#   SHARDS=N      pytest processes side by side per tool (default 8; tests/conftest.py: COCKTAIL_SHARD)
#   LIMIT=s       seconds each tool may run (default 540); a shard cut short is reported as such
#   PYTEST_ARGS   what to test (default: the GPU tests, -m gpu)
#
# racecheck instruments Cocktail's own kernels only (KERNELS below): shared-memory hazards are a
# property of a kernel, and CuPy's library kernels are not ours to fix.  memcheck and synccheck
# instrument every kernel the tests launch.
set -uo pipefail
OUT=${OUT:-sanitize_out}
SHARDS=${SHARDS:-8}
LIMIT=${LIMIT:-540}
PYTEST_ARGS=${PYTEST_ARGS:--m gpu}
KERNELS='regex=(csr_|coo_|dia|ell|hyb|pkt|bcsr|bdia|clipped_histogram|scale_y|spin|cocktail_)'
tools=("$@")
[[ ${#tools[@]} -eq 0 ]] && tools=(memcheck racecheck synccheck)
mkdir -p "$OUT"
export PYTHONPATH=$PWD/src:${PYTHONPATH:-} PYTHONUNBUFFERED=1 COCKTAIL_NO_CUPY_POOL=1

summary="$OUT/sanitize_summary.txt"
{
  echo "# scripts/sanitize.sh  $(date -u +%Y-%m-%dT%H:%MZ)"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  compute-sanitizer --version | tail -1
  echo "commit ${COCKTAIL_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null)}  shards $SHARDS  pytest $PYTEST_ARGS"
} > "$summary"

# Compile every kernel once, outside the sanitizer, so the shards share CuPy's on-disk cache.
python3 -m pytest -q -p no:cacheprovider -x tests/test_gpu_kernels.py -k "int32 and float64" > "$OUT/warmup.log" 2>&1

status=0
for tool in "${tools[@]}"; do
  flags=(--tool "$tool" --error-exitcode 99 --print-limit 50)
  [[ $tool == racecheck ]] && flags+=(--kernel-name "$KERNELS" --racecheck-report hazard)
  start=$(date +%s)
  pids=()
  for ((i = 0; i < SHARDS; i++)); do
    COCKTAIL_SHARD=$i/$SHARDS timeout "$LIMIT" compute-sanitizer "${flags[@]}" \
      python3 -m pytest -q -p no:cacheprovider $PYTEST_ARGS > "$OUT/$tool.$i.log" 2>&1 &
    pids+=($!)
  done
  codes=()
  for pid in "${pids[@]}"; do wait "$pid"; codes+=($?); done
  secs=$(( $(date +%s) - start ))
  for ((i = 0; i < SHARDS; i++)); do
    log="$OUT/$tool.$i.log"
    errors=$(grep -h "ERROR SUMMARY" "$log" | tail -1 | sed 's/.*ERROR SUMMARY: //')
    tests=$(grep -E "^[0-9]+ (passed|failed)|[0-9]+ passed|[0-9]+ failed" "$log" | tail -1 | sed 's/^=* *//; s/ *=*$//')
    code=${codes[$i]}
    verdict=ok
    if [[ $code == 124 ]]; then verdict="CUT at ${LIMIT}s"; status=1
    elif [[ $code != 0 ]]; then verdict="exit $code"; status=1; fi
    echo "$tool shard $i/$SHARDS: ${errors:-no summary}; ${tests:-no pytest summary}; $verdict" >> "$summary"
  done
  echo "$tool: ${secs}s wall" >> "$summary"
done
cat "$summary"
exit $status
