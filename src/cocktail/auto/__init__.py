"""``format="auto"``: everything that picks a plan for a matrix, in one package.

- :mod:`.features`: what the planner sees of a matrix, computed on the GPU (row lengths, diagonals,
  block statistics, how scattered the gathers of ``x`` are, the structure's fingerprint);
- :mod:`.variants` and :mod:`.profile`: the kernel variants the planner weighs and the device
  profile that predicts their times (``cocktail calibrate`` writes it; the H100 and H200 profiles
  ship in ``profiles/``);
- :mod:`.planner`: the candidates, single formats and Cocktails, costed from the profile, with the
  planner's thresholds;
- :mod:`.planning`: the construction-time entry (:func:`.planning.choose`): features, planner, the
  race on the matrix, ``tune="measure"``, the decision cache (:mod:`.decisions`);
- :mod:`.fixed_rule`: the rule without a profile (and on the CPU).
"""
