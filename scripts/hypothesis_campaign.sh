#!/usr/bin/env bash
# The property-based campaign on the GPU: COCKTAIL_HYPOTHESIS_EXAMPLES (default 2000) random
# matrices per format, every kernel of the format, checked against the format's own-array reference
# within the gamma bound (tests/kernels/test_gpu_hypothesis.py). A failure prints its seed and hypothesis's blob.
# Usage, from the repository root on the GPU machine: bash scripts/hypothesis_campaign.sh
#   OUT=dir (default ./gpu_out); SHARDS=N pytest processes side by side (default: one per format;
#   tests/conftest.py: COCKTAIL_SHARD); LIMIT=s seconds each may run (default 540).
set -uo pipefail
OUT=${OUT:-gpu_out}
mkdir -p "$OUT"
export PYTHONPATH=$PWD/src:${PYTHONPATH:-} PYTHONUNBUFFERED=1
export COCKTAIL_HYPOTHESIS_EXAMPLES=${COCKTAIL_HYPOTHESIS_EXAMPLES:-2000}
SHARDS=${SHARDS:-$(python3 -c "import cocktail.formats as f; print(len(f.names()))")}
LIMIT=${LIMIT:-540}

summary="$OUT/hypothesis_campaign.txt"
{
  echo "# scripts/hypothesis_campaign.sh  $(date -u +%Y-%m-%dT%H:%MZ)"
  nvidia-smi --query-gpu=name --format=csv,noheader
  echo "commit ${COCKTAIL_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null)}, $COCKTAIL_HYPOTHESIS_EXAMPLES examples per format, $SHARDS shards"
} > "$summary"
start=$(date +%s)
pids=()
for ((i = 0; i < SHARDS; i++)); do
  COCKTAIL_SHARD=$i/$SHARDS timeout "$LIMIT" python3 -m pytest -m gpu tests/kernels/test_gpu_hypothesis.py -q \
    -p no:cacheprovider --hypothesis-show-statistics -rA > "$OUT/hypothesis_campaign.$i.log" 2>&1 &
  pids+=($!)
done
status=0
for ((i = 0; i < SHARDS; i++)); do
  wait "${pids[$i]}"; code=$?
  [[ $code != 0 ]] && status=1
  log="$OUT/hypothesis_campaign.$i.log"
  echo "shard $i: exit $code; $(grep -oE 'test_random_matrices_within_gamma_bound\[[^]]+\]' "$log" | sort -u | tr '\n' ' ')$(grep -E 'passing examples|[0-9]+ (passed|failed)' "$log" | tr -s ' ' | tr '\n' ';')" >> "$summary"
done
echo "wall $(( $(date +%s) - start )) s" >> "$summary"
cat "$summary"
exit "$status"
