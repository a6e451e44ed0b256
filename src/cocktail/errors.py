"""Exceptions and warnings raised by Cocktail."""


class CocktailError(Exception):
    """Base class of every error Cocktail raises on purpose."""


class MatrixFileError(CocktailError, ValueError):
    """A matrix file is missing, unreadable or malformed; the message names the file."""


class FormatFillError(CocktailError, ValueError):
    """A padded format would store far more values than the matrix has nonzeros.

    ``fill`` (value slots per stored entry) and ``max_fill`` (the limit) are attributes.
    """

    fill: float = float("nan")
    max_fill: float = float("nan")


class FormatValuesError(CocktailError, ValueError):
    """A format that stores its values as codes into a table would need more distinct values than the table holds.

    ``distinct`` (the values the table would hold) and ``limit`` (the most it holds) are attributes.
    """

    distinct: int = 0
    limit: int = 0


class CPUFallbackWarning(RuntimeWarning):
    """No CUDA GPU was found, so products run on the CPU reference executor."""
