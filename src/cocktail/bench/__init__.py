"""The benchmark harness behind ``cocktail bench`` and ``cocktail report``.

- :mod:`.problems`: the suites and the matrices they hold (generators, the papers' matrices, the
  holdout classes, families);
- :mod:`.measuring`: the methods a run times (our formats and kernels, ``format="auto"``, the
  vendor's and other libraries' baselines, the call-overhead ways, the CPU headline's pair timed
  call for call);
- :mod:`.records`: one record per measurement, the journal that keeps records as
  they are measured, the metrics computed from them, which records answered wrong, and the
  reading of kept record files, gzipped or not;
- :mod:`.output`: the terminal tables, the Markdown report, the plots, the target verdicts and the
  progress shown during a run;
- :mod:`.runner` runs methods over problems (timed by :mod:`cocktail.timing`).
"""
