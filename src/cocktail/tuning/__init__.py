"""Tuning rules: every threshold that picks a format's parameters, a kernel or its launch lives here.

Kernels and format builders take the value a rule produced; they hold no thresholds.  The
thresholds of ``format="auto"``'s planner live with it (:mod:`cocktail.auto.planner`).
"""
