"""Exceptions and warnings raised by Cocktail, and how an error quotes another ("first_line")."""


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


class DeviceMemoryError(CocktailError, MemoryError):
    """A matrix, or a format of it, does not fit in the memory of the device it is built on.

    Raised before allocating when the need is known in advance, or in place of CuPy's
    ``OutOfMemoryError`` (after returning the pool's free blocks to the driver, so the CUDA
    context stays usable).  ``needed`` and ``available`` (bytes; ``available`` may be None when
    the device cannot tell) and ``device`` (``"cpu"`` or ``"cuda"``) are attributes.
    """

    def __init__(self, message: str, needed: int = 0, available: int | None = None, device: str = "cpu"):
        super().__init__(message)
        self.needed, self.available, self.device = int(needed), available, device


def first_line(exc: BaseException) -> str:
    """The first line of ``exc``'s message (its type's name when it has none), for an error that quotes it."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


class CPUFallbackWarning(RuntimeWarning):
    """No CUDA GPU was found, so products run on the CPU reference executor."""
