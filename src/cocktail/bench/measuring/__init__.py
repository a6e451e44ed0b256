"""How the benchmark measures: the methods it runs, the baselines, the call-overhead ways and the timers."""
