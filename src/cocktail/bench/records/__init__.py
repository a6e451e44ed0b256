"""What the benchmark keeps: records, their provenance and journal, the metrics and selections over them."""
