"""Merge the summaries of several ``scripts/sanitize.sh`` runs: what each tool has covered, and what is left.

Usage: python scripts/sanitize_coverage.py SUMMARY.txt [SUMMARY.txt ...]

A run may shard a part differently from another (16, 64 or 128 shards): shard ``i/N`` holds the tests whose
position in the collected list is ``i`` modulo ``N`` (tests/conftest.py), so the runs together cover a part
when every residue modulo the least common multiple of their shard counts lies in a shard that ran to its
end.  Give the summaries oldest first: a later shard that covers an earlier one replaces it in the counts.
Prints one line per tool and part, and the shards still to run where a part is not covered.
"""

from __future__ import annotations

import math
import re
import sys
from collections import defaultdict

#: Verdicts of a shard that ran to its end: clean, empty, a failed test (pytest's 1), errors reported (99).
ENDED = ("ok", "no test in this shard", "exit 1", "exit 99")
LINE = re.compile(r"^(memcheck|racecheck|synccheck) (\w+) shard (\d+)/(\d+): (.*); (.*); (.*)$")


def _count(pattern: str, text: str) -> int:
    found = re.search(pattern, text)
    return int(found.group(1)) if found else 0


def merge(paths):
    """``{(tool, part): [(index, count, errors, passed, failed, verdict), ...]}`` over every summary."""
    shards = defaultdict(list)
    for path in paths:
        with open(path) as f:
            for line in f:
                m = LINE.match(line.strip())
                if m:
                    tool, part, i, n, errors, tests, verdict = m.groups()
                    found = _count(r"(\d+) (?:errors|hazards displayed)", errors) if "SUMMARY" in errors else None
                    shards[tool, part].append((int(i), int(n), found, _count(r"(\d+) passed", tests),
                                               _count(r"(\d+) failed", tests), verdict))
    return shards


def report(shards) -> list[str]:
    """One line per tool and part: shards ended ok, tests passed and failed in them, errors, what is left."""
    lines = []
    for (tool, part), runs in sorted(shards.items()):
        period = math.lcm(*(r[1] for r in runs))
        ok, covered = [], set()
        for r in reversed([r for r in runs if r[5] in ENDED]):  # the latest run of a shard counts
            residues = set(range(r[0], period, r[1]))
            if not residues <= covered:
                ok.append(r)
                covered |= residues
        missing = sorted(set(range(period)) - covered)
        errors = sum(r[2] or 0 for r in ok)
        text = (f"{tool} {part}: {len(ok)} shards ended, {sum(r[3] for r in ok)} tests passed, "
                f"{sum(r[4] for r in ok)} failed, {errors} errors reported")
        text += "; every test covered" if not missing else f"; not covered: residues {missing} of {period}"
        lines.append(text)
    return lines


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    print("\n".join(report(merge(sys.argv[1:]))))
