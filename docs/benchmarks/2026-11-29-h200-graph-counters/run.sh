#!/usr/bin/env bash
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
M="holdout_rmat holdout_knn holdout_preferential holdout_tall circuit webbase eu2005"
python3 docs/benchmarks/2026-11-29-h200-graph-counters/probe.py $M > $OUT/warm.txt 2>&1; echo "warm rc $?"; tail -2 $OUT/warm.txt
METRICS=gpu__time_duration.sum,smsp__inst_executed.sum,smsp__thread_inst_executed.sum,smsp__thread_inst_executed_pred_on.sum,lts__t_sectors_srcunit_tex_op_read.sum,dram__bytes_read.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum
timeout 420 ncu --target-processes all --kernel-name regex:"csr_stream|csrmv|csr_partition" --metrics $METRICS --csv --page raw \
  python3 docs/benchmarks/2026-11-29-h200-graph-counters/probe.py $M > $OUT/ncu.csv 2> $OUT/ncu.err; echo "ncu rc $?"
grep -c "csr_stream\|csrmv" $OUT/ncu.csv; tail -3 $OUT/ncu.err
