"""How the benchmark measures: the methods it runs, the baselines and the call-overhead ways (timed by
:mod:`cocktail.timing`)."""
