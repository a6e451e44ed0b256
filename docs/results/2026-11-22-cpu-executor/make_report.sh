#!/usr/bin/env bash
# Regenerates report.md from the committed JSON of `cocktail bench` on a CPU-only machine (the
# default-cpu suite: the CPU executors, cocktail-auto and SciPy). Never edit report.md by hand.
set -euo pipefail
cd "$(dirname "$0")"
PYTHON=${PYTHON:-python3}
[[ -x ../../../.venv/bin/python ]] && PYTHON=../../../.venv/bin/python
PYTHONPATH=../../../src $PYTHON -m cocktail.bench.output.report default-cpu.json.gz --out report.md \
  --title "Cocktail on the CPU: default-cpu suite, cocktail-auto against SciPy (the executors)" \
  --note "Machine: $(sed -n 2p machine.txt), $(sed -n 1p machine.txt) cores (the CI kind); $(sed -n 3p machine.txt); $(sed -n 4p machine.txt) (machine.txt)." \
  --note "Command: \`cocktail bench --json default-cpu.json\` without a GPU: the default suite shrunk to CPU size, each format's default CPU executor (SciPy's compiled product for csr, coo, dia and whole-block bcsr; the reference executor otherwise), \`cocktail-auto\` (csr on the CPU) and SciPy's \`S @ x\`; median host time per product."
