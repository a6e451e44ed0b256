"""What the benchmark keeps: records (stamped by :mod:`cocktail.provenance`), their journal, the metrics
and selections over them, and the reading of kept files, gzipped or not (:mod:`.files`)."""
