"""Strict Matrix Market reading: the checks that ``scipy.io.mmread`` leaves out.

SciPy's reader (fast_matrix_market) parses numbers quickly but accepts files the Matrix Market
specification forbids: entries above the diagonal of a symmetric file (it sums both mirror
images), diagonal entries of a skew-symmetric file, ``2.5`` in an integer file (truncated),
fields after the last one (ignored), values that overflow to infinity.  Here the header is
parsed in Python, the body is checked with a few vectorised passes over its bytes, and only
then is SciPy handed a canonical copy (banner rewritten, body comment lines blanked, line
numbers unchanged) to parse.  Every refusal is a :class:`~cocktail.errors.MatrixFileError`
naming the file and the 1-based line.

Decisions: ``nan``, ``inf`` and ``infinity`` literals (any case, signed) are kept as given; a
finite literal that overflows to infinity is refused.  An integer file takes only integer
literals (digits with an optional sign); a real one only numbers: a sign starts a token or an
exponent, one point, one exponent after it with digits (``1.2.3``, ``2e``, ``12-``, which SciPy
would read in part, are refused).  A skew-symmetric array stores the strictly lower
triangle (the diagonal is zero), as the specification and SciPy say, so an array that also
lists the diagonal has too many values.  A size line is refused, naming its line, when its rows x
cols overflows int64 (NumPy and SciPy index a matrix's positions in it) or when a coordinate file
declares more entries than the positions it may list (``m*n``; a symmetric or hermitian file the
lower triangle, a skew-symmetric one the strictly lower triangle); entries repeated within that
count are summed, as SciPy does.
"""

from __future__ import annotations

import bz2
import gzip
import io
import re
from pathlib import Path
from typing import NamedTuple

import numpy as np
import scipy.io
import scipy.sparse as sp

from .errors import MatrixFileError

#: Value fields per entry of each field (pattern entries have none).
FIELDS = {"real": 1, "double": 1, "integer": 1, "complex": 2, "pattern": 0}
SYMMETRIES = ("general", "symmetric", "skew-symmetric", "hermitian")
INT64_MAX = int(np.iinfo(np.int64).max)
#: Fewest bytes one coordinate entry line can take ("1 1\n"); a dense array value takes "1\n".
_MIN_ENTRY_BYTES = {"coordinate": 4, "array": 2}
#: Decompressed bytes allowed per declared number in a compressed file (a bound against bombs).
_BYTES_PER_TOKEN = 64
_HEADER_CHUNK = 1 << 22


class Header(NamedTuple):
    """What the banner and the size line of a Matrix Market file declare."""

    layout: str       # "coordinate" or "array"
    field: str        # real, double, integer, complex or pattern
    symmetry: str     # general, symmetric, skew-symmetric or hermitian
    shape: tuple      # (rows, cols)
    entries: int      # entry lines (coordinate) or values (array) the body must hold
    banner_end: int   # byte offset just past the banner line
    body_start: int   # byte offset just past the size line
    body_line: int    # 1-based line number of the body's first line

    @property
    def tokens(self) -> int:
        """Whitespace-separated fields on each entry line."""
        values = max(FIELDS[self.field], 1) if self.layout == "array" else FIELDS[self.field]
        return values + (2 if self.layout == "coordinate" else 0)


def _error(path, line: int, what: str) -> MatrixFileError:
    return MatrixFileError(f"'{path}' is not a readable Matrix Market file: line {line}: {what}")


# ---------------------------------------------------------------------------------------------
# Header


def _lines(buf: bytes, start: int = 0):
    """(line number, start offset, end offset past the newline, text) of each line from ``start``."""
    number, pos = 1, start
    while pos < len(buf):
        end = buf.find(b"\n", pos)
        end = len(buf) if end < 0 else end + 1
        yield number, pos, end, buf[pos:end]
        number, pos = number + 1, end


def _banner(text: bytes, path) -> tuple[str, str, str]:
    words = text.decode("ascii", "replace").lower().split()
    usage = "the first line must be '%%MatrixMarket matrix coordinate|array <field> <symmetry>'"
    if len(words) != 5 or words[0] != "%%matrixmarket":
        raise _error(path, 1, f"not a Matrix Market banner ({usage})")
    obj, layout, field, symmetry = words[1:]
    if obj != "matrix":
        raise _error(path, 1, f"object {obj!r}: only 'matrix' files are read")
    if layout not in ("coordinate", "array"):
        raise _error(path, 1, f"format {layout!r}: expected coordinate or array")
    if field not in FIELDS:
        raise _error(path, 1, f"field {field!r}: expected one of {', '.join(FIELDS)}")
    if symmetry not in SYMMETRIES:
        raise _error(path, 1, f"symmetry {symmetry!r}: expected one of {', '.join(SYMMETRIES)}")
    if field == "pattern" and (layout == "array" or symmetry not in ("general", "symmetric")):
        raise _error(path, 1, f"a pattern field goes with coordinate general or symmetric, not {layout} {symmetry}")
    if symmetry == "hermitian" and field != "complex":
        raise _error(path, 1, f"a hermitian matrix has a complex field, not {field}")
    return layout, field, symmetry


def _size(text: bytes, line: int, layout: str, symmetry: str, path) -> tuple[tuple[int, int], int]:
    """The shape and declared entry count of a size line."""
    words = text.split()
    want = 3 if layout == "coordinate" else 2
    what = "rows cols entries" if want == 3 else "rows cols"
    if len(words) != want or not all(re.fullmatch(rb"[0-9]+", w) for w in words):
        shown = text.decode("ascii", "replace").strip()
        raise _error(path, line, f"size line {shown!r}: expected {want} non-negative integers ({what})")
    numbers = [int(w) for w in words]
    if max(numbers) > INT64_MAX:
        raise _error(path, line, f"size line declares {max(numbers):.3g}, more than int64 holds")
    m, n = numbers[:2]
    if symmetry != "general" and m != n:
        raise _error(path, line, f"a {symmetry} matrix is square, but the size line declares {m} x {n}")
    if m * n > INT64_MAX:
        raise _error(path, line, f"size line declares {m:,} x {n:,}: its rows x cols = {m * n:.3g} positions "
                                 "overflow int64, in which NumPy and SciPy index a matrix's positions; "
                                 "split the matrix into blocks of rows whose rows x cols fits")
    positions = _positions(m, n, symmetry)
    if layout == "array":
        return (m, n), positions
    if numbers[2] > positions:
        where = (f"of a {m:,} x {n:,} matrix" if symmetry == "general" else
                 f"of the {'strictly ' if symmetry == 'skew-symmetric' else ''}lower triangle that a {m:,} x {n:,} "
                 f"{symmetry} file lists")
        plural = "s" if positions != 1 else ""
        raise _error(path, line, f"size line declares {numbers[2]:,} entries, more than the {positions:,} "
                                 f"position{plural} {where}; the entry count (its third number) cannot exceed them")
    return (m, n), numbers[2]


def _positions(m: int, n: int, symmetry: str) -> int:
    """Positions a file of ``symmetry`` can list: all ``m*n`` (general), else the lower triangle (skew: strictly)."""
    return {"general": m * n, "skew-symmetric": n * (n - 1) // 2}.get(symmetry, n * (n + 1) // 2)


def parse_header(buf: bytes, path) -> Header:
    """Parse and check the banner, comment lines and size line at the start of ``buf``."""
    lines = _lines(buf)
    first = next(lines, None)
    if first is None:
        raise _error(path, 1, "the file is empty")
    layout, field, symmetry = _banner(first[3], path)
    last = first
    for last in lines:
        number, _, end, text = last
        if text.lstrip().startswith(b"%") or not text.strip():
            continue
        shape, entries = _size(text, number, layout, symmetry, path)
        return Header(layout, field, symmetry, shape, entries, first[2], end, number + 1)
    raise _error(path, last[0] + 1, "the file ends before the size line")


def _check_room(header: Header, size: int, path) -> None:
    """Refuse a header that declares more entries than ``size`` bytes can hold, before allocating."""
    least = _MIN_ENTRY_BYTES[header.layout]
    if header.entries * least > size:
        raise MatrixFileError(f"'{path}' declares {header.entries:,} entries, more than its {size:,} bytes "
                              f"can hold ({least} bytes per entry at least)")


# ---------------------------------------------------------------------------------------------
# Reading the bytes


def read_bytes(path: Path) -> bytes:
    """The file's bytes, decompressed for ``.gz`` and ``.bz2`` with a bound taken from its header."""
    name = path.name.lower()
    opener = gzip.open if name.endswith(".gz") else bz2.open if name.endswith(".bz2") else None
    if opener is None:
        return path.read_bytes()
    with opener(path, "rb") as fh:
        head = fh.read(_HEADER_CHUNK)
        header = parse_header(head, path)
        limit = header.body_start + header.tokens * header.entries * _BYTES_PER_TOKEN + _HEADER_CHUNK
        rest = fh.read(max(limit - len(head), 0) + 1)
    if len(head) + len(rest) > limit:
        raise MatrixFileError(f"'{path}' decompresses to more than {limit:,} bytes, more than the "
                              f"{header.entries:,} entries its size line declares can take")
    return head + rest


# ---------------------------------------------------------------------------------------------
# The body


#: Byte classes, one table per field: whitespace is the least (``_check_number_shapes`` relies on it),
#: then digits, letters of nan/inf, bytes the field does not allow, and the marks: signs, points, exponents.
_SPACE, _DIGIT, _LETTER, _OTHER, _SIGN, _DOT, _EXP = range(7)
_DIGITS = b"0123456789"
_NAN_INF = b"nanifty" + b"NANIFTY"


def _class_table(allowed: bytes) -> bytes:
    """A ``bytes.translate`` table giving each byte its class; those not in ``allowed`` (nor space) are _OTHER."""
    table = bytearray([_OTHER] * 256)
    for chars, code in ((b" \t\r\n", _SPACE), (_DIGITS, _DIGIT), (b"+-", _SIGN), (b".", _DOT), (b"eE", _EXP),
                        (_NAN_INF, _LETTER)):
        for c in chars:
            if code == _SPACE or c in allowed:
                table[c] = code
    return bytes(table)


_TABLES = {"pattern": _class_table(_DIGITS), "integer": _class_table(_DIGITS + b"+-"),
           **{f: _class_table(_DIGITS + b"+-.eE" + _NAN_INF) for f in ("real", "double", "complex")}}
_EXPECTED = {"pattern": "an index (a positive integer)", "integer": "an integer literal (the field is integer)"}
_NON_FINITE = re.compile(rb"[+-]?(nan|inf|infinity)", re.IGNORECASE)


def blank_comments(buf: bytes, start: int) -> bytes:
    """``buf`` with each comment line from ``start`` on turned into spaces (line numbers kept)."""
    out = bytearray(buf)
    pos = buf.find(b"%", start)
    while pos >= 0:
        line_start = buf.rfind(b"\n", 0, pos) + 1
        end = buf.find(b"\n", pos)
        end = len(buf) if end < 0 else end
        if not buf[line_start:pos].strip():  # else a '%' inside an entry, refused as a bad character
            out[line_start:end] = b" " * (end - line_start)
        pos = buf.find(b"%", end)
    return bytes(out)


def blank_leading_plus(buf: bytes, start: int) -> bytes:
    """``buf`` with each ``+`` that opens a number from ``start`` on turned into a space (``+5``, ``+.5``, ``+inf``).

    C's ``strtod`` and ``strtol`` read a leading ``+``, so the specification allows it; SciPy's parser
    does not.  A ``+`` elsewhere (``1e+5``, or a lone ``+``) is kept for the checks to judge.
    """
    if buf.find(b"+", start) < 0:
        return buf
    codes = np.frombuffer(buf, dtype=np.uint8)
    plus = np.flatnonzero(codes[start:len(buf) - 1] == ord("+")) + start
    before, after = codes[plus - 1], codes[plus + 1]
    opens = np.isin(before, np.frombuffer(b" \t\r\n", np.uint8))
    opens &= np.isin(after, np.frombuffer(_DIGITS + b".iInN", np.uint8))
    if not opens.any():
        return buf
    out = codes.copy()
    out[plus[opens]] = ord(" ")
    return out.tobytes()


class Body:
    """The body of a Matrix Market file (everything after the size line), checked with vectorised passes.

    Line numbers and lines of entries are found only when a check fails (they cost a pass).
    """

    def __init__(self, buf: bytes, header: Header, path):
        self.buf, self.header, self.path = buf, header, path
        self.start = header.body_start
        self._classes = None

    @property
    def classes(self) -> bytes:
        """Each byte's class (:func:`_class_table`), made again after :meth:`release` if needed."""
        if self._classes is None:
            self._classes = self.buf.translate(_TABLES[self.header.field])
        return self._classes

    def release(self) -> None:
        """Drop the byte classes (a copy of the file's size) while SciPy parses."""
        self._classes = None

    def error(self, index: int, what: str) -> MatrixFileError:
        """The error for body line ``index`` (0-based)."""
        return _error(self.path, self.header.body_line + int(index), what)

    def line_index(self, pos: int) -> int:
        """0-based body line holding byte ``pos`` of the file."""
        return int(np.searchsorted(self._newlines, pos - self.start))

    def line_text(self, index: int) -> bytes:
        """Body line ``index`` (0-based) without its newline."""
        nl = self._newlines
        begin = self.start + (int(nl[index - 1]) + 1 if index else 0)
        end = self.start + int(nl[index]) if index < nl.size else len(self.buf)
        return self.buf[begin:end]

    def entry_line(self, entry: int) -> int:
        """0-based body line of entry ``entry`` (blank lines skipped)."""
        return int(np.flatnonzero(self._line_tokens)[entry])

    @property
    def has_letters(self) -> bool:
        """True when the body spells a nan or inf (checked by :meth:`check`)."""
        return self.classes.find(b"\x02", self.start) >= 0

    def check(self) -> None:
        """Refuse bad characters, malformed nan/inf literals, wrong field counts and entry counts."""
        bad = self.classes.find(b"\x03", self.start)
        if bad >= 0:
            self._refuse_token(bad)
        if self.has_letters:
            self._check_spelled_values()
        self._check_number_shapes()
        tokens, want = self._count_tokens(), self.header.tokens * self.header.entries
        if tokens != want or (self.header.entries and not self.header.tokens):
            self.refuse_counts()

    def _count_tokens(self) -> int:
        space = np.frombuffer(self.classes, np.uint8, offset=self.start) == 0
        return int(np.count_nonzero(space[:-1] > space[1:])) + int(space.size > 0 and not space[0])

    @property
    def _newlines(self) -> np.ndarray:
        if not hasattr(self, "_nl"):
            self._nl = np.flatnonzero(np.frombuffer(self.buf, np.uint8, offset=self.start) == 10)
        return self._nl

    @property
    def _line_tokens(self) -> np.ndarray:
        """Tokens on each body line (one more line than newlines: the text after the last one)."""
        if not hasattr(self, "_lt"):
            space = np.frombuffer(self.classes, np.uint8, offset=self.start) == 0
            starts = np.flatnonzero(space[:-1] > space[1:]) + 1
            if space.size and not space[0]:
                starts = np.concatenate(([0], starts))
            lines = np.searchsorted(self._newlines, starts)
            self._lt = np.bincount(lines, minlength=self._newlines.size + 1)
        return self._lt

    def _refuse_token(self, pos: int):
        index = self.line_index(pos)
        text = self.line_text(index)
        begin = self.start + (int(self._newlines[index - 1]) + 1 if index else 0)
        word = next(w for w in re.finditer(rb"\S+", text) if w.start() <= pos - begin < w.end()).group()
        raise self.error(index, f"{word.decode('ascii', 'replace')!r} is not "
                                f"{_EXPECTED.get(self.header.field, 'a number')}")

    def _check_number_shapes(self) -> None:
        """Refuse tokens of number characters that are no number, which SciPy would read in part:
        a sign inside a token (``12-``, ``1+1``), a second point or exponent (``1.2.3``, ``1e5e5``),
        a point after the exponent, an exponent without digits (``2e``), a lone point or sign.

        Looks only at the signs, points and exponents, and at the bytes either side of them."""
        if self.header.field == "pattern":
            return  # digits only: the character classes said so
        codes = np.frombuffer(self.classes, np.uint8)  # the byte before the body is a newline
        at = self.start + np.flatnonzero(codes[self.start:] >= _SIGN)  # the marks are the greatest classes
        cur, prev = codes[at], codes[at - 1]
        nxt = codes[np.minimum(at + 1, codes.size - 1)]
        nxt[at + 1 == codes.size] = _SPACE
        sign, dot, exp = cur == _SIGN, cur == _DOT, cur == _EXP
        bad = sign & ~((prev == _SPACE) | (prev == _EXP))                    # a sign starts a token or an exponent
        bad |= sign & ~((nxt == _DIGIT) | (nxt == _DOT) | (nxt == _LETTER))  # and something follows it
        bad |= sign & (prev == _EXP) & (nxt != _DIGIT)                       # an exponent's sign: digits
        bad |= exp & ~((prev == _DIGIT) | (prev == _DOT))                    # an exponent follows the mantissa
        bad |= exp & ~((nxt == _DIGIT) | (nxt == _SIGN))                     # and has digits
        bad |= dot & ~((prev == _DIGIT) | (nxt == _DIGIT))                   # a point touches a digit
        # Two marks in one token are one too many, but for a point then its exponent.  From a mark to
        # the next, a token boundary is whitespace, the smallest code: one reduceat finds each span's least.
        which = np.flatnonzero(dot | exp)
        if which.size > 1:
            same_token = np.minimum.reduceat(codes, at[which])[:-1] != _SPACE
            point_then_exponent = (cur[which[:-1]] == _DOT) & (cur[which[1:]] == _EXP)
            bad[which[1:]] |= same_token & ~point_then_exponent
        if bad.any():
            self._refuse_token(int(at[np.argmax(bad)]))

    def _check_spelled_values(self) -> None:
        """Each token with a letter of nan/inf must be a value field spelling nan, inf or infinity."""
        cls = np.frombuffer(self.classes, np.uint8, offset=self.start)
        lines = np.unique(np.searchsorted(self._newlines, np.flatnonzero(cls == 2)))
        first_value = 2 if self.header.layout == "coordinate" else 0
        for index in lines:
            words = self.line_text(index).split()
            for k, word in enumerate(words):
                if not word.isdigit() and not _is_number(word, k >= first_value):
                    raise self.error(index, f"{word.decode('ascii', 'replace')!r} is not a number")

    def refuse_counts(self):
        """Raise for the first line with a wrong number of fields, or for the wrong number of entry lines."""
        counts, want = self._line_tokens, self.header.tokens
        wrong = np.flatnonzero((counts != 0) & (counts != want))
        if wrong.size:
            h = self.header
            raise self.error(wrong[0], f"{counts[wrong[0]]} fields, but this {h.layout} {h.field} file has {want} on each line")
        lines = np.flatnonzero(counts)
        declared = self.header.entries
        if lines.size > declared:
            raise self.error(lines[declared], f"more entries than the {declared:,} the size line declares")
        if lines.size < declared:
            end = self._newlines.size + (0 if self.buf.endswith(b"\n") or len(self.buf) == self.start else 1)
            raise self.error(end, f"the file ends after {lines.size:,} of the {declared:,} entries "
                                  "the size line declares")

    def first_overflow(self) -> int | None:
        """0-based body line of the first finite literal that overflows to infinity, if any (a Python scan)."""
        for index, text in enumerate(self.buf[self.start:].split(b"\n")):
            for word in text.split():
                if not _NON_FINITE.fullmatch(word) and np.isinf(float(word)):
                    return index
        return None


def _is_number(word: bytes, value: bool) -> bool:
    if not value:
        return False
    if _NON_FINITE.fullmatch(word):
        return True
    try:
        float(word)
    except ValueError:
        return False
    return True


# ---------------------------------------------------------------------------------------------
# Parsing and the checks on the parsed entries


class _Pieces(io.RawIOBase):
    """A raw stream over byte pieces, so SciPy parses without a joined copy of the file.

    SciPy reads 1 KiB at a time: wrapped in ``io.BufferedReader`` those reads stay in C.
    """

    def __init__(self, *pieces):
        super().__init__()
        self._pieces = [memoryview(p).cast("B") for p in pieces if len(p)]

    def readable(self) -> bool:
        """Always True."""
        return True

    def readinto(self, b) -> int:
        """Copy the next bytes into ``b``; 0 at the end."""
        if not self._pieces:
            return 0
        piece = self._pieces[0]
        n = min(len(b), len(piece))
        b[:n] = piece[:n]
        if n == len(piece):
            self._pieces.pop(0)
        else:
            self._pieces[0] = piece[n:]
        return n


def _scipy_read(buf: bytes, body: Body):
    """SciPy's parse of ``buf`` under a canonical banner (raw triplets for coordinate files)."""
    header, path = body.header, body.path
    field = "real" if header.field == "double" else header.field
    symmetry = "general" if header.layout == "coordinate" else header.symmetry
    banner = f"%%MatrixMarket matrix {header.layout} {field} {symmetry}\n".encode()
    try:
        return scipy.io.mmread(io.BufferedReader(_Pieces(banner, memoryview(buf)[header.banner_end:]), 1 << 20),
                              spmatrix=False)
    except (ValueError, OverflowError) as exc:
        text = str(exc).strip().rstrip(".")
        found = re.match(r"Line (\d+): (.*)", text)
        if found:
            raise _error(path, int(found.group(1)), found.group(2)[:1].lower() + found.group(2)[1:]) from None
        body.refuse_counts()  # the right number of fields, but not one entry a line
        raise MatrixFileError(f"'{path}' is not a readable Matrix Market file: {text}") from None


def _check_triangle(row, col, body: Body) -> None:
    """Symmetric, hermitian and skew-symmetric files list the lower triangle only (skew: strictly)."""
    symmetry = body.header.symmetry
    skew = symmetry == "skew-symmetric"
    bad = row <= col if skew else row < col
    if bad.any():
        e = int(np.argmax(bad))
        where = "on the diagonal" if row[e] == col[e] else "above the diagonal"
        rule = "strictly lower triangle (row > column)" if skew else "lower triangle (row >= column)"
        raise body.error(body.entry_line(e), f"entry ({row[e] + 1}, {col[e] + 1}) lies {where}; a {symmetry} "
                                             f"file stores only the {rule}")


def _check_hermitian_diagonal(rows, values, entries, body: Body) -> None:
    """A hermitian matrix equals its conjugate transpose, so its diagonal is real.

    ``rows`` and ``values`` are the diagonal entries read, ``entries`` their places in the file's entry order.
    """
    imaginary = values.imag != 0
    if imaginary.any():
        k = int(np.argmax(imaginary))
        i = int(rows[k]) + 1
        raise body.error(body.entry_line(int(entries[k])), f"entry ({i}, {i}) on the diagonal has an imaginary part; "
                                                           "a hermitian matrix's diagonal is real")


def _check_overflow(values, body: Body) -> None:
    """Refuse a finite literal that became infinite; nan and inf literals are kept."""
    inf = np.isinf(values)
    if not inf.any():
        return
    if body.header.layout == "coordinate" and not body.has_letters:  # every infinity came from a finite literal
        line = body.entry_line(int(np.argmax(inf)))
    else:
        line = body.first_overflow()
    if line is not None:
        raise body.error(line, "a value overflows to infinity")


def _expand(row, col, data, symmetry: str):
    """The full pattern of a symmetric, skew-symmetric or hermitian lower triangle."""
    if symmetry == "general":
        return row, col, data
    off = row != col
    mirror = data[off]
    if symmetry == "skew-symmetric":
        mirror = -mirror
    elif symmetry == "hermitian":
        mirror = mirror.conj()
    return (np.concatenate((row, col[off])), np.concatenate((col, row[off])), np.concatenate((data, mirror)))


def read(path: Path):
    """Read a Matrix Market file after the strict checks: a ``coo_array`` (coordinate) or ``ndarray`` (array).

    Raises :class:`~cocktail.errors.MatrixFileError` naming the file and the line for anything the
    specification does not allow.
    """
    buf = read_bytes(path)
    header = parse_header(buf, path)
    _check_room(header, len(buf), path)
    if buf.find(b"%", header.body_start) >= 0:
        buf = blank_comments(buf, header.body_start)
    buf = blank_leading_plus(buf, header.body_start)
    body = Body(buf, header, path)
    body.check()
    body.release()
    parsed = _scipy_read(buf, body)
    if header.layout == "array":
        _check_overflow(parsed, body)
        if header.symmetry == "hermitian":  # the lower triangle column by column: column j starts at j*n - j(j-1)/2
            j = np.arange(min(header.shape), dtype=np.int64)
            _check_hermitian_diagonal(j, np.diagonal(parsed), j * header.shape[0] - j * (j - 1) // 2, body)
        return parsed
    row, col, data = parsed.row, parsed.col, parsed.data
    if header.symmetry != "general":
        _check_triangle(row, col, body)
    if header.symmetry == "hermitian":
        on = np.flatnonzero(row == col)
        _check_hermitian_diagonal(row[on], data[on], on, body)
    if data.dtype.kind in "fc":
        _check_overflow(data, body)
    row, col, data = _expand(row, col, data, header.symmetry)
    return sp.coo_array((data, (row, col)), shape=header.shape)
