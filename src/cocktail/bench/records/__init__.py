"""What the benchmark keeps: records (stamped by :mod:`cocktail.provenance`), their journal, the metrics
and selections over them."""
