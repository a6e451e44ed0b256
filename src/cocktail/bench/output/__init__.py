"""What the benchmark shows: the terminal tables, the Markdown report, the plots, the targets and progress."""
