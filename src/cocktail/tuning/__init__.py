"""Tuning rules: every threshold that picks a format, a width or a kernel lives here.

Kernels and format builders take the value a rule produced; they hold no thresholds.
"""
