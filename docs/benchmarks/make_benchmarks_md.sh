#!/usr/bin/env bash
# Regenerates the benchmark reports and their plots from the committed JSON of GPU runs; never edit
# the reports by hand.
#
# 1. docs/benchmarks.md, the latest run (issue 10, bandwidth): $BW/<suite>_<dtype>.json, the records
#    of `cocktail bench --suite S --all-kernels --methods ours,auto,cusparse,cupyx --no-overhead
#    --repeat 20 --dtype D --json S_D.json` for the structured, williams, cocktail and holdout suites
#    in float32 and float64, plots in $BW/plots.
# 1b. docs/benchmarks/2026-11-23-h100-planner.md, the planner run (issue 9): the same command without
#    cupyx, at commit e99d8a0, in $PLAN.
# 2. docs/benchmarks/2026-11-22-h100-executor.md, the executor run (issue 8): $NEW/default.json, the
#    records of `cocktail bench --dtype float64,float32 --json default.json` (the default suite, then
#    the call-overhead section on random10k and the default suite), plots in $NEW/plots.
# 3. docs/benchmarks/2026-11-22-h100.md, the earlier full run (commit 376f0d2, before the executor
#    redesign): the JSON of `bash scripts/gpu_check.sh full` (per suite and dtype:
#    `cocktail bench --suite S --all-kernels --dtype D --json S_D.json`) in $OLD, plots in $OLD/plots.
#
# Runs from any directory. Plots need matplotlib: the Python is $PYTHON, else the checkout's .venv,
# else python3.
set -euo pipefail
cd "$(dirname "$0")/../.."
if [[ -z ${PYTHON:-} ]]; then
  if [[ -x .venv/bin/python ]]; then PYTHON=.venv/bin/python; else PYTHON=python3; fi
fi
report() { PYTHONPATH=src "$PYTHON" -m cocktail.cli report "$@"; }

BW=docs/benchmarks/2026-11-23-h100-bandwidth
PLAN=docs/benchmarks/2026-11-23-h100-planner
NEW=docs/benchmarks/2026-11-22-h100-executor
OLD=docs/benchmarks/2026-11-22-h100
OLD_REPORT=docs/benchmarks/2026-11-22-h100.md

# How the times are measured: shared by both reports.
TIMES_NOTE="Times: *kernel time* replays a CUDA graph of four products (one per rotated x buffer) with CUDA events around each replay, median of at least 100 replays; cupyx refuses stream capture, so its products are issued back to back from Python behind a queued busy-wait kernel, which keeps the GPU from waiting on the host between the events. *Call time* (in the JSON, \`call_us\`) is one synchronous call from Python. cuSPARSE: descriptors, workspace and SpMV preprocessing made once outside the timing, each of CSR_ALG1, CSR_ALG2, COO_ALG1, COO_ALG2 timed, and \`cusparse-best\` the fastest of the four per problem. SciPy runs on the host CPU."
RATES_NOTE="GFLOP/s is 2·nnz / kernel time. Effective GB/s uses each format's byte model (Bell & Garland's: one read of x per stored value), so it can exceed DRAM bandwidth when x is served from cache; the bandwidth maps show it in GB/s (the JSON's \`bandwidth_fraction\` is it over the measured device-to-device copy bandwidth, about 3,000 GB/s here, read plus write). L2 is 50 MiB; each record's \`l2_ratio\` is its byte model over the L2 size."

# 1. The latest run: bandwidth (issue 10), every suite, float32 and float64, commit a29ac93.
grep -q '^commit a29ac93$' $BW/gpu.txt  # the notes below describe this run
report \
  $BW/structured_float64.json $BW/williams_float64.json $BW/cocktail_float64.json $BW/holdout_float64.json \
  $BW/structured_float32.json $BW/williams_float32.json $BW/cocktail_float32.json $BW/holdout_float32.json \
  --plots $BW/plots --out docs/benchmarks.md \
  --title "Cocktail SpMV benchmark: NVIDIA H100, every suite against cuSPARSE, float32 and float64 (issue 10: bandwidth)" \
  --note "GPU: NVIDIA H100 80GB HBM3 (driver 580.159.04, 81,559 MiB); CuPy 14.2.0, CUDA runtime 13.2 (13020), NumPy 2.5.2, SciPy 1.18.1 ($BW/gpu.txt). Date 2026-11-23; commit a29ac93 (every record carries gpu, cuda, cupy, commit and date). Planner profile: the shipped H100 profile (src/cocktail/tuning/profiles/h100.json: the full grid of commit 17e6f24 plus csr_stream(k=8), csr_stream(k=16) and dia_vi sampled on the full grid at commit ff41dc8, the tree of this run's kernels)." \
  --note "Command, per suite S in structured, williams, cocktail, holdout and dtype D: \`cocktail bench --suite S --all-kernels --methods ours,auto,cusparse,cupyx --no-overhead --repeat 20 --dtype D --json S_D.json\`. Methods: every kernel of every format with its default parameters (\`best-single\` the fastest of them per problem), \`cocktail-auto\` (\`SparseMatrix(S)\`: format='auto', the planner on the profile), \`cocktail-measured\` (\`tune='measure'\`), cuSPARSE's four algorithms (\`cusparse-best\` the fastest per problem) and cupyx \`A @ x\`. New since the planner run: the csr_stream kernel (CSR in balanced warp items, products staged in shared memory) and the dia_vi format (DIA with one-byte codes into a table of the matrix's distinct values: the Laplacians have two). The holdout suite was never used to set a threshold; no threshold was fitted to a named matrix. The FEM matrices use the documented grid substitute (scikit-fem is not installed on the GPU machine)." \
  --note "$TIMES_NOTE" \
  --note "$RATES_NOTE The DRAM columns and the issue 10 bandwidth targets use the DRAM traffic model instead (each array read once, x once when it fits in L2, y written once: docs/performance-notes.md); ncu's DRAM byte counts agree with it within 3% for CSR and DIA (8% more for coo_atomic, whose atomics move y again), same notes." \
  --note "Targets of issue 10, kernel time. (1) \`cocktail-auto\` 1.5x cuSPARSE in geometric mean: missed, 1.23 (float64), 1.31 (float32), 1.27 over all 66 problems (the planner run, same method: 1.16). Per suite and dtype (float64, float32): structured 2.77 and 2.70 (dia_vi; 1.75 and 1.56 before), williams 1.16 and 1.42, holdout 1.06 and 1.12, cocktail 0.88 and 0.74 (0.77 and 0.66 before). At least 0.95x on every matrix: missed on 28 of 66. Two causes. (a) Kernel: on the web and circuit graphs our best kernel (csr_stream, or coo_atomic) reads CSR's or COO's bytes but is 0.63-0.93x cuSPARSE's CSR algorithm 1, which already runs at 74-85% of the copy bandwidth on them (ncu on in2004 float64: 63.5% of peak DRAM throughput and 71% warps active, against 50% and 62% for an earlier csr_stream design, probe 4): best-single, the fastest of our kernels, is below 0.95x on 17 of the 66 problems. (b) Planner: on 14 problems \`cocktail-auto\` is more than 10% slower than best-single, mostly csr_stream predicted faster than coo_atomic on the holdout's irregular matrices (the profile's synthetic rows have adjacent columns), and protein float64 (0.60, a SELL+CSR Cocktail where csr_vector is 1.6x faster); \`cocktail-measured\` recovers most of them (geometric mean 1.37 over cuSPARSE). (2) Call time, cupyx over \`cocktail-auto\`: met, 2.71 (float64) and 3.08 (float32). (3) DRAM-model bandwidth on matrices over 4x L2: power-law (circuit5m, eu2005, in2004, float64) met, worst 0.64; regular missed: laplace27_100 0.29 (float64) and 0.36 (float32), because the planner picks dia_vi, which moves 5.4x (float64) and 3.3x (float32) fewer bytes than DIA and is 1.7x faster, but is bound by its 27 gathers of x per row rather than by DRAM (DIA itself reaches 0.92 of the floor below on it); and ga41as41h72 float64 0.74, a DIA+csr_stream Cocktail. (4) DIA at 80% of the floor (values once, x and y at the copy bandwidth) on the Laplacians: float64 met, worst 0.83; float32 missed, 0.67-0.77 (half the bytes per thread in flight: latency; unrolling the diagonal loop did not help, docs/performance-notes.md). dia_vi reaches 0.94-1.56 of that floor, since it reads fewer bytes than the values once." \
  --note "GPU tests at this commit on the H100: \`pytest -m gpu\` 5830 passed, 1 skipped (needs a second GPU). compute-sanitizer on the GPU tests of the new kernels (csr_stream, dia_vi; int32 indices) with CuPy's memory pool off: memcheck 0 errors (dia_vi's 168 tests; csr_stream's ran until the 170 s limit with no error reported, and all 168 of them ran clean at commit 830fc24, which changed only how csr_stream's long-row ticket returns to zero: atomicInc instead of a reset, after a review; its 656 csr_stream and dia_vi GPU tests pass there too), synccheck 0 errors (336 tests), racecheck no hazard in our kernels (its only reports are in CuPy's own nonzero kernel)." \
  --note "Generated by docs/benchmarks/make_benchmarks_md.sh from the JSON beside it."

# 1b. The planner run (issue 9), every suite, float32 and float64, commit e99d8a0.
grep -q '^commit e99d8a0$' $PLAN/gpu.txt  # the notes below describe this run
report \
  $PLAN/structured_float64.json $PLAN/williams_float64.json $PLAN/cocktail_float64.json $PLAN/holdout_float64.json \
  $PLAN/structured_float32.json $PLAN/williams_float32.json $PLAN/cocktail_float32.json $PLAN/holdout_float32.json \
  --plots $PLAN/plots --out docs/benchmarks/2026-11-23-h100-planner.md \
  --title "Cocktail SpMV benchmark: NVIDIA H100, the format planner (format='auto') on every suite, float32 and float64" \
  --note "GPU: NVIDIA H100 80GB HBM3 (driver 580.159.04, 81,559 MiB); CuPy 14.2.0, CUDA runtime 13.2 (13020), NumPy 2.5.2, SciPy 1.18.1 ($PLAN/gpu.txt). Date 2026-11-23; commit e99d8a0 (every record carries gpu, cuda, cupy, commit and date). Planner profile: the shipped H100 profile (src/cocktail/tuning/profiles/h100.json, \`cocktail calibrate\` full grid, measured on this GPU model at commit 17e6f24)." \
  --note "Command, per suite S in structured, williams, cocktail, holdout and dtype D: \`cocktail bench --suite S --all-kernels --methods ours,auto,cusparse --no-overhead --repeat 20 --dtype D --json S_D.json\` (so medians of at least 20 samples, not the 100 of the timing note below). Methods: every kernel of every format with its default parameters (\`best-single\` is the fastest of them per problem), \`cocktail-auto\` (\`SparseMatrix(S)\`, format='auto', the planner on the profile), \`cocktail-measured\` (\`tune='measure'\`: the best predicted candidates and the best of each format timed on the matrix; the decision cache is off during a benchmark) and cuSPARSE's four algorithms (\`cusparse-best\` the fastest). The holdout suite (eight generated classes, fixed seeds) was never used to set a threshold; no threshold was fitted to a named matrix. The FEM matrices use the documented grid substitute (scikit-fem is not installed on the GPU machine)." \
  --note "$TIMES_NOTE" \
  --note "$RATES_NOTE" \
  --note "Targets of issue 9, on kernel time (best-single's time over the method's, higher is better). \`cocktail-auto\` within 10% of best-single in geometric mean: met (0.99 in both dtypes). At least 0.8x on every matrix: missed on six of 66 problems, worst laplace7_100 float32 (0.62: the planner predicts bdia_direct at 11 µs, it runs in 26 µs while dia runs in 16 µs) and protein float64 (0.63: a predicted SELL(52%) CSR(48%) Cocktail at 20 µs runs in 42 µs). The profile's synthetic matrices have adjacent columns and one band, so the model does not see scattered x gathers or many thin bands; the others are fem_cantilever float64 0.75, laplace5_1000 float32 0.73, holdout_rmat and lp float32 0.78. \`cocktail-measured\` within 3%: met (1.09 float32, 1.07 float64; above 1 because it times parameter variants, e.g. other block shapes and lanes per row, that best-single's default parameters do not try). Cocktail suite, a Cocktail 10% faster than best-single: missed (about 1.0x); on these graphs coo_atomic is the best single kernel and no Cocktail beats it, and cuSPARSE is 1.2-1.6x faster than both, which is kernel bandwidth (issue 10). Analysis and planning at most 20 SpMVs: missed by far, 190 to 10,000 SpMVs, i.e. 11-62 ms: the features are CuPy array operations with a sort per block shape kept and about a hundred host synchronisations, plus 1-30 ms of Python planning; the two outliers (dense float64 13 s, holdout_banded float64 0.6 s) are the first matrices of their runs to reach code paths that CuPy compiles once per process. Conversion is reported beside it (\`convert_spmvs\`)." \
  --note "Generated by docs/benchmarks/make_benchmarks_md.sh from the JSON in 2026-11-23-h100-planner/."

# 2. The executor run: default suite and call overhead, commit b661d60.
grep -q '^commit b661d608fb1bba6151d06d59b6734db614a71810$' $NEW/gpu.txt  # the notes below describe this run
report $NEW/default.json \
  --plots $NEW/plots --out docs/benchmarks/2026-11-22-h100-executor.md \
  --title "Cocktail SpMV benchmark: NVIDIA H100, default suite and call overhead, float32 and float64" \
  --note "GPU: NVIDIA H100 80GB HBM3 (driver 580.159.04, 81,559 MiB); CuPy 14.2.0, CUDA runtime 13.2 (13020), PyTorch 2.11.0+cu130, NumPy 2.5.2, SciPy 1.18.1 ($NEW/gpu.txt). Date 2026-11-22; commit b661d60 (every record carries gpu, cuda, cupy, commit and date)." \
  --note "Command: \`cocktail bench --dtype float64,float32 --json default.json\`, which runs the default suite (laplace7_100, laplace27_100, fem_spheres, circuit, webbase, lp, mip1, in2004, generated with fixed seeds: the same matrices as in the full run, FEM grid substitute included) with each format's default kernel (for CSR the kernel rule picks csr_vector on four matrices and csr_merge on the other four, hence the dashes in their columns), \`cocktail-auto\`, cuSPARSE per algorithm, cupyx, torch and SciPy, and then the call-overhead section (\`cocktail bench --overhead\` runs that section alone). The previous full run, all suites and all kernels at commit 376f0d2 (before the executor redesign), is in [2026-11-22-h100.md](2026-11-22-h100.md)." \
  --note "$TIMES_NOTE" \
  --note "$RATES_NOTE" \
  --note "Call overhead: per-call host+GPU time on a non-default stream, *back to back* (N calls from a Python loop and one stream synchronisation, over N, N for about 30 ms, median of 5 loops) and *one synchronous call* (median of at least 100), for \`A.matvec(x, out=y)\`, \`A @ x\` and the bound product \`A.bind(x, out=y)()\` of \`SparseMatrix(S, format=\"auto\")\`, that bound product's own CUDA graph replayed raw (\`cocktail-graph\`: its floor, the kernels' GPU time included), cupyx \`A @ x\`, \`torch.mv\` and \`cusparseSpMV\` (CSR_ALG1, ctypes, descriptors made once), against the floors: an empty \`RawKernel\` launch and the replay of a CUDA graph holding it. Matrices: random10k (10,000 rows, 5 random nonzeros per row) and the default suite. The tables' last three columns are back-to-back ratios: \`A.matvec\` and \`A @ x\` over the empty launch, the bound product over the empty graph replay (\"bound / empty graph\")." \
  --note "Targets: the three floor targets (\`A.matvec(x, out=y)\` within 2x an empty \`RawKernel\` launch, \`A @ x\` within 2.5x, the bound product within 1.2x an empty graph replay, all back to back) are judged on the host-bound matrices only, those where the product's own CUDA graph (\`cocktail-graph\`) replays faster than one empty launch from Python: here only random10k. On the larger matrices back-to-back calls run at the kernels' pace, so the floor ratios there measure the kernels, not the call; the target row \"A.bind(x, out=y)() / its own graph replayed raw\" (not an issue target) shows Cocktail's host cost on every matrix. The call-time targets against cupyx and torch (one synchronous call) depend on the kernel \`format=\"auto\"\` picks, which is still the placeholder rule of \`cocktail.tuning.auto\` (dia, ell, hyb by fill, else csr) until the planner exists." \
  --note "Generated by docs/benchmarks/make_benchmarks_md.sh from $NEW/default.json."

# 3. The earlier full run: all suites, all kernels, commit 376f0d2.
report \
  $OLD/structured_float64.json $OLD/williams_float64.json $OLD/cocktail_float64.json \
  $OLD/structured_float32.json $OLD/williams_float32.json $OLD/cocktail_float32.json \
  --plots $OLD/plots --out $OLD_REPORT \
  --title "Cocktail SpMV benchmark: NVIDIA H100, all suites, float32 and float64 (full run at commit 376f0d2, before the executor redesign)" \
  --note "GPU: NVIDIA H100 80GB HBM3 (driver 580.159.04); CuPy 14.2.0, CUDA runtime 13.2, cuSPARSE 12.6.3 (12603), PyTorch 2.11.0+cu130, NumPy 2.5.2, SciPy 1.18.1 ($OLD/gpu.txt). Date 2026-11-22; commit 376f0d2 (every record carries gpu, cuda, cupy, commit and date)." \
  --note "Command: \`bash scripts/gpu_check.sh full\`, i.e. \`cocktail bench --suite structured|williams|cocktail --all-kernels --dtype float64|float32 --json ...\`. Suites: Bell & Garland's Table 3 Laplacians (structured), stand-ins of Williams et al.'s 14 matrices (williams) and of clSpMV's six (cocktail), generated with fixed seeds; the FEM matrices use the documented grid substitute (scikit-fem was not installed)." \
  --note "$TIMES_NOTE" \
  --note "$RATES_NOTE" \
  --note "Generated by docs/benchmarks/make_benchmarks_md.sh from the JSON beside it."
