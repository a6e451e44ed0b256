"""Kernel time after / before, per matrix and method, of two ``cocktail bench --json`` runs (GPU records).

    python scripts/bench_before_after.py BEFORE.json AFTER.json

Prints the geometric mean of after/before over every GPU record (SciPy's CPU times left out), the
extremes, and the csr_vector and cocktail-auto rows.
"""
import math, statistics, sys

from cocktail.bench.records.files import load_json

b=load_json(sys.argv[1]); a=load_json(sys.argv[2])
def idx(recs):
    return {(r['matrix'],r['method'],r.get('dtype')): r for r in recs if r.get('section') in (None,'spmv') and r.get('kernel_us')}
B,A=idx(b),idx(a)
rows=[]
for k in sorted(B):
    if k in A and k[1] not in ('scipy',):
        rows.append((A[k]['kernel_us']/B[k]['kernel_us'],k,B[k]['kernel_us'],A[k]['kernel_us']))
rows.sort()
g=math.exp(statistics.mean(math.log(r[0]) for r in rows))
print(f"{len(rows)} GPU records; geomean after/before {g:.4f}; min {rows[0][0]:.3f} {rows[0][1][:2]}; max {rows[-1][0]:.3f} {rows[-1][1][:2]}")
for r in rows[:4]+rows[-6:]: print(f"  {r[0]:.3f} {r[1][0]:14s} {r[1][1]:22s} {r[2]:9.2f} -> {r[3]:9.2f}")
for r in rows:
    if r[1][1] in ('csr_vector','cocktail-auto'): print(f"  {r[0]:.3f} {r[1][0]:14s} {r[1][1]:22s} {r[2]:9.2f} -> {r[3]:9.2f}")
