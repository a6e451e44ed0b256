#!/usr/bin/env bash
# compute-sanitizer over the whole GPU test suite, with CuPy's memory pool off (a pooled block
# would hide an out-of-bounds access inside it).  Run on the GPU machine from the repository root.
#
# Usage: bash scripts/sanitize.sh [memcheck] [racecheck] [synccheck]     (default: all three)
#   OUT=dir       logs and the summary (default ./sanitize_out)
#   SHARDS=N      pytest processes per part and tool (default 8; tests/conftest.py: COCKTAIL_SHARD)
#   JOBS=N        of which at most N run side by side (default SHARDS): many short shards lose little to a limit
#   LIMIT=s       seconds each shard may run (default 540); a shard cut short is reported as such
#   FIRST, LAST   run shards FIRST..LAST only (default all), to spread one tool over several calls
#   LIST          or these shards ("0 3 7"), e.g. those a time limit cut short
#   PARTS         "products oom harness" (default) or some of them; SHARDS, LIST and JOBS are the
#                 products part's: oom runs in one process and harness in 8 (it has 14 tests)
#
# Each test process gets COCKTAIL_SANITIZER=TOOL (tests that compare two times skip that comparison).
# Before each tool's run, scripts/sanitize_canary.py launches a kernel with a fault of that tool's
# kind; the summary says whether the tool reported it.
#
# The sanitizer checks memory and synchronisation, not repetition: under it the determinism tests
# repeat each product COCKTAIL_DETERMINISM_RUNS=3 times (100 in the plain GPU run) and the hypothesis
# tests draw COCKTAIL_HYPOTHESIS_EXAMPLES=10 matrices per format (the campaign draws 2000 without it):
# every launch of an instrumented kernel costs the sanitizer time.
#
# Three groups of the GPU tests (-m gpu):
#   products  every test but those below, with CuPy's memory pool off, in SHARDS processes;
#   oom       tests/test_gpu_memory.py alone in one process, pool off: its tests run out of GPU memory
#             on purpose (they would starve the shards beside them), and the tool's report of each
#             refused cudaMalloc (--report-api-errors) is turned off for them; accesses are still checked;
#   harness   the benchmark harness's tests (HARNESS below), with the pool on: they time calls
#             captured in CUDA graphs, and a call that allocates inside a capture (cupyx's product
#             allocates its result) cannot be captured with the pool off.
# Every tool instruments Cocktail's own kernels only (KERNELS below; tests/test_sanitize_script.py checks
# that it names every __global__ function in the package): they are ours to fix, CuPy's and cuSPARSE's
# are not, and instrumenting CuPy's many small kernels made memcheck 15-50x slower (one pkt test: over
# 100 s against 8 s filtered and 6 s without the tool).  CUDA API calls are checked whatever the filter.
set -uo pipefail
OUT=${OUT:-sanitize_out}
SHARDS=${SHARDS:-8}
FIRST=${FIRST:-0}
LAST=${LAST:-$((SHARDS - 1))}
LIST=${LIST:-$(seq -s ' ' "$FIRST" "$LAST")}
export COCKTAIL_DETERMINISM_RUNS=${COCKTAIL_DETERMINISM_RUNS:-3} COCKTAIL_HYPOTHESIS_EXAMPLES=${COCKTAIL_HYPOTHESIS_EXAMPLES:-10}
LIMIT=${LIMIT:-540}
JOBS=${JOBS:-$SHARDS}
PARTS=${PARTS:-products oom harness}
HARNESS="tests/bench/test_gpu_bench.py tests/bench/test_gpu_cli.py"
OOM="tests/test_gpu_memory.py"
KERNELS='regex=(csr_|coo_|dia|ell|hyb|pkt|bcsr|bdia|clipped_histogram|length_buckets|scale_y|spin|cocktail_|feature_|scatter_groups|value_facts|value_sample|stream_pieces|stream_items|rest_rows|block_build_|part_split_)'
tools=("$@")
[[ ${#tools[@]} -eq 0 ]] && tools=(memcheck racecheck synccheck)
mkdir -p "$OUT"
export PYTHONPATH=$PWD/src:${PYTHONPATH:-} PYTHONUNBUFFERED=1
ignore_others=$(for f in $HARNESS $OOM; do printf -- '--ignore=%s ' "$f"; done)

summary="$OUT/sanitize_summary.txt"
{
  echo "# scripts/sanitize.sh  $(date -u +%Y-%m-%dT%H:%MZ)"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  compute-sanitizer --version | tail -1
  echo "commit ${COCKTAIL_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null)}  determinism runs $COCKTAIL_DETERMINISM_RUNS  hypothesis examples $COCKTAIL_HYPOTHESIS_EXAMPLES  shards $LIST of $SHARDS  parts $PARTS  ${PYTEST_ADDOPTS:+PYTEST_ADDOPTS=$PYTEST_ADDOPTS}"
} > "$summary"

# Compile every kernel once, outside the sanitizer, so the shards share CuPy's on-disk cache.
python3 -m pytest -q -p no:cacheprovider -x tests/kernels/test_gpu_kernels.py -k "int32 and float64" > "$OUT/warmup.log" 2>&1

# One shard of one part under one tool; its verdict line goes to the summary as soon as it ends, so a
# run cut short by an outer limit keeps the shards that finished.
run_shard() {
  local tool=$1 group=$2 i=$3 of=$4 log="$OUT/$1.$2.$3.log" code errors tests verdict=ok
  COCKTAIL_SANITIZER=$tool COCKTAIL_NO_CUPY_POOL=$pool COCKTAIL_SHARD=$i/$of timeout "$LIMIT" \
    compute-sanitizer "${flags[@]}" "${extra[@]}" python3 -m pytest -q -p no:cacheprovider $args > "$log" 2>&1
  code=$?
  errors=$(grep -hE "(ERROR|RACECHECK) SUMMARY" "$log" | tail -1 | sed 's/^=* *//')
  tests=$(grep -E "[0-9]+ (passed|failed|skipped).* in [0-9.]+s" "$log" | tail -1 | sed 's/^=* *//; s/ *=*$//')
  if [[ $code == 124 ]]; then verdict="CUT at ${LIMIT}s"
  elif [[ $code == 5 ]]; then verdict="no test in this shard"  # pytest's exit 5: fewer tests than shards
  elif [[ $code != 0 ]]; then verdict="exit $code"; fi
  echo "$tool $group shard $i/$of: ${errors:-no summary}; ${tests:-no pytest summary}; $verdict" >> "$summary"
}

status=0
for tool in "${tools[@]}"; do
  # Host backtraces are not saved at each launch (slow with Python's deep stacks); an error still
  # names its kernel, thread and address.
  flags=(--tool "$tool" --error-exitcode 99 --print-limit 50 --show-backtrace device --kernel-name "$KERNELS")
  [[ $tool == racecheck ]] && flags+=(--racecheck-report hazard)
  # A kernel with a known fault first: the tool must report it, or a clean run below proves nothing.
  timeout 120 compute-sanitizer "${flags[@]}" python3 scripts/sanitize_canary.py "$tool" > "$OUT/$tool.canary.log" 2>&1
  canary=$?
  if [[ $canary == 99 ]]; then
    echo "$tool canary: its fault was reported (the tool sees Cocktail's kernels)" >> "$summary"
  else
    echo "$tool canary: its fault was NOT reported (exit $canary): the runs below prove nothing" >> "$summary"
    status=1
  fi
  for group in $PARTS; do
    shards=$LIST; of=$SHARDS; extra=()
    case $group in
      products) pool=1; args="-m gpu $ignore_others" ;;
      oom) pool=1; args="-m gpu $OOM"; shards=0; of=1; extra=(--report-api-errors no) ;;
      harness) pool=; args="-m gpu $HARNESS"; shards=$(seq 0 7); of=8 ;;
      *) echo "unknown part $group" >&2; exit 2 ;;
    esac
    start=$(date +%s)
    for i in $shards; do
      while (( $(jobs -rp | wc -l) >= JOBS )); do wait -n; done
      run_shard "$tool" "$group" "$i" "$of" &
    done
    wait
    secs=$(( $(date +%s) - start ))
    echo "$tool $group: ${secs}s wall" >> "$summary"
  done
done
grep -qE "CUT at|; exit [0-9]+$" "$summary" && status=1
cat "$summary"
exit $status
