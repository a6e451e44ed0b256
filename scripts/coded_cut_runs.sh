#!/usr/bin/env bash
# The coded cut's runs on the GPU machine, from the checkout: csr_vi's GPU tests, its kernels against csr's and
# cuSPARSE's, and cocktail-auto with the planner's coded and short-column cuts off and on, in one device call.
# Records, console output and logs go to OUTDIR (default coded_cut_runs/), packed into $OUT/coded_cut_runs.tgz
# after every step (a run cut short keeps the finished ones).  Tabled by scripts/byte_cut_table.py.
#   SUITES (default "williams cocktail holdout"), DTYPES (default "float64 float32"), UNSEEN=0 skips the
#   small-world matrix (scripts/small_world.py, a class in no suite), STEPS (default all: pytest kernels_few
#   auto_few_off auto_few_coded auto_few_coded_short auto_pattern_off auto_pattern_short unseen) runs some; a
#   bench whose OUTDIR/TAG.json.partial.jsonl is there (a run cut short) resumes it.
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH=$PWD/src${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 COCKTAIL_DECISIONS=off
R=${OUTDIR:-coded_cut_runs}; mkdir -p "$R"; OUT=${OUT:-$R}
C=${COCKTAIL_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null)}
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; echo "commit $C"; date -u; } > "$R/gpu.txt"
cat "$R/gpu.txt"
want() { [[ " ${STEPS:-all} " == *" all "* || " ${STEPS:-all} " == *" $1 "* ]]; }
pack() { tar czf "$OUT/coded_cut_runs.tgz" -C "$R" . 2>/dev/null; }
# bench TAG CUTS ARGS...: cocktail bench with the planner's cuts set by CUTS (Python run before the CLI)
bench() {
  tag=$1; cuts=$2; shift 2; s=$(date +%s)
  want "$tag" || return 0
  resume=(); [[ -f $R/$tag.json.partial.jsonl ]] && resume=(--resume)
  timeout "${LIMIT:-300}" python3 -c "import sys; from cocktail.auto import planner; $cuts
from cocktail.cli import main; sys.exit(main(sys.argv[1:]))" bench "$@" --json "$R/$tag.json" "${resume[@]}" >> "$R/$tag.txt" 2>&1
  echo "$tag: exit $? in $(( $(date +%s) - s )) s" | tee -a "$R/steps.txt"; pack
}
SUITE_ARGS=(); for s in ${SUITES:-williams cocktail holdout}; do SUITE_ARGS+=(--suite "$s"); done
DT=$(echo ${DTYPES:-float64 float32} | tr ' ' ,)
OFF="planner.CODED_CUT = False"
CODED="planner.CODED_CUT = True"
SHORT="planner.SHORT_COLUMNS_CUT = ('sell', 'csr_pattern', 'csr_vi')"

s=$(date +%s)
want pytest && timeout 150 python3 -m pytest -q -p no:cacheprovider tests/formats/test_gpu_csr_vi.py > "$R/pytest_gpu_csr_vi.log" 2>&1
want pytest && echo "pytest tests/formats/test_gpu_csr_vi.py: $(tail -1 "$R/pytest_gpu_csr_vi.log") in $(( $(date +%s) - s )) s" | tee -a "$R/steps.txt"
pack
# the kernels: csr and csr_vi, every kernel, on matrices of 16 distinct values
bench kernels_few "$OFF" "${SUITE_ARGS[@]}" --values few --all-kernels --formats csr,csr_vi --methods ours,cusparse --dtype "$DT"
# the planner: the coded cut off, on (as shipped), the coded cut with short columns; and short columns on pattern matrices
bench auto_few_off "$OFF" "${SUITE_ARGS[@]}" --values few --methods cocktail-auto,cusparse --dtype "$DT"
bench auto_few_coded "$CODED" "${SUITE_ARGS[@]}" --values few --methods cocktail-auto,cusparse --dtype "$DT"
bench auto_few_coded_short "$CODED; $SHORT" "${SUITE_ARGS[@]}" --values few --methods cocktail-auto,cusparse --dtype "$DT"
bench auto_pattern_off "$OFF" "${SUITE_ARGS[@]}" --values pattern --methods cocktail-auto,cusparse --dtype "$DT"
bench auto_pattern_short "$SHORT" "${SUITE_ARGS[@]}" --values pattern --methods cocktail-auto,cusparse --dtype "$DT"
if [[ ${UNSEEN:-1} != 0 ]] && want unseen; then
  python3 scripts/small_world.py /tmp/small_world.npz | tee -a "$R/steps.txt"
  STEPS=all bench unseen_few "$OFF" /tmp/small_world.npz --values few --formats csr,csr_vi --methods ours,cocktail-auto,cusparse --dtype "$DT"
  STEPS=all bench unseen_few_coded "$CODED" /tmp/small_world.npz --values few --methods cocktail-auto,cusparse --dtype "$DT"
fi
cat "$R/steps.txt"
