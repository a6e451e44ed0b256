"""Tuning rules: the thresholds that pick a format's parameters, a kernel or its launch.

The rules several kernels share live here (:mod:`.kernel_rules`, :mod:`.coo`, :mod:`.launch_rules`' rule book) with
the formats' parameter rules; a kernel's own rules and thresholds live in its folder (``kernels/<name>/rules.py``:
its launch rules, read by its ``configure``, and its default rule, ``KernelSpec.default_when``), a rule over row
lengths that several kernels' default rules share beside them (``kernels/row_rules.py``).  CUDA sources hold no thresholds: they take the value a rule produced.  The
thresholds of ``format="auto"``'s planner live with it (:mod:`cocktail.auto.planner`).
"""
