#!/usr/bin/env bash
# Issue 11's property-based campaign on the GPU: COCKTAIL_HYPOTHESIS_EXAMPLES (default 2000) random
# matrices per format, every kernel of the format, checked against the format's own-array reference
# within the gamma bound (tests/test_gpu_hypothesis.py). A failure prints its seed and hypothesis's blob.
# Usage, from the repository root on the GPU machine: bash scripts/hypothesis_campaign.sh  (logs under $OUT, default ./gpu_out)
set -uo pipefail
OUT=${OUT:-gpu_out}
mkdir -p "$OUT"
export PYTHONPATH=$PWD/src:${PYTHONPATH:-} PYTHONUNBUFFERED=1
export COCKTAIL_HYPOTHESIS_EXAMPLES=${COCKTAIL_HYPOTHESIS_EXAMPLES:-2000}

echo "commit ${COCKTAIL_COMMIT:-$(git rev-parse HEAD 2>/dev/null)}, $COCKTAIL_HYPOTHESIS_EXAMPLES examples per format" \
  | tee "$OUT/hypothesis_campaign.txt"
start=$(date +%s)
python3 -m pytest -m gpu tests/test_gpu_hypothesis.py -q -p no:cacheprovider --hypothesis-show-statistics -rA \
  2>&1 | tee "$OUT/hypothesis_campaign.log" | tail -80
status=${PIPESTATUS[0]}
echo "pytest exit $status, $(( $(date +%s) - start )) s wall" | tee -a "$OUT/hypothesis_campaign.txt"
exit "$status"
