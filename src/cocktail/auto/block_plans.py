"""Block products of a planned matrix: one plan per bucket of k and layout, timed on the matrix.

A matrix planned by ``format="auto"`` multiplies a block of ``k`` vectors with whichever of its
executor's block choices is fastest for that bucket of ``k`` (the rule ``spmm_bucket``: 2, 4, 8, ...,
256) and layout of ``X`` and ``Y`` (row-major, column-major, strided): one product per column, the
format's block kernel (each stored entry read once per tile of columns), or, for a CSR or COO
matrix, each of cuSPARSE's SpMM algorithms.  The choice is made before the first block product of
the bucket runs (or by ``A.prepare_block_products(k)``), by the matrix's
:class:`~cocktail.auto.plans.PlannedProduct` (:func:`plan_bucket`), and set on the executor, which
only runs it: each candidate is timed from BLOCK_RACE_CALLS products in a CUDA graph, on scratch
blocks of the same shape and layout (the caller's arrays are never touched), and kept per bucket,
so later products pay nothing.  One product per column is
timed as it runs: ``k`` SpMVs on the columns of column-major blocks, and for row-major ones with the
copies to and from their transposes.  Between the vendor and ours a tie (within :data:`RACE_TIE`) goes
to the vendor, as in the SpMV race: the goal is never to be slower than the vendor.

Where the device profile holds SpMM samples (``cocktail calibrate --spmm``: each block choice's time
over one SpMV's, per SpMV kernel, layout and k), the candidates are costed first: one SpMV of the
matrix is timed, each choice predicted from it (:func:`costed`), and only the promising ones raced
(:func:`promising`: within BLOCK_RACE_WITHIN of the best prediction, at most BLOCK_RACE_MAX, the
rule's and the best vendor choice always among them).  Without samples every candidate is raced.

A Cocktail's parts one after another, and a matrix stored in another format than CSR, have a rival:
the whole matrix as one CSR with its own planned block product (:class:`WholeRival`), which runs a
bucket where it measured faster.

A block product inside a CUDA graph capture cannot be timed: a bucket first met there takes the
rule's choice (``A.prepare_block_products(k)`` ahead of the capture plans it).
"""

from __future__ import annotations

from .. import _memory
from ..executors.base import block_key
from ..kernels.cusparse import CusparseError

#: Products per timed graph and timed replays of a block candidate (one replay warms, the median of the
#: others counts).
BLOCK_RACE_CALLS, BLOCK_RACE_REPLAYS = 2, 3
#: Between the vendor's choice and ours, a plan of ours must beat the vendor's by this share to be kept: the goal is
#: never to be slower than the vendor, and a few percent is within the timing's noise.
RACE_TIE = 0.03


def planner(deterministic: bool = False, vendor: bool = True):
    """The block planner of a matrix planned with ``deterministic`` (only bit-wise deterministic choices) and
    ``vendor`` (cuSPARSE's kernels allowed): ``plan(executor, operands) -> BlockChoice``."""

    def plan(executor, operands):
        """The fastest of ``executor``'s block choices for ``operands``, timed on scratch blocks: those the device
        profile's SpMM samples predict promising (:func:`costed`), every one without them (the rule's choice
        alone where nothing else may run, or where the scratch blocks do not fit in GPU memory).  Only a matrix
        planned with ``deterministic`` keeps to deterministic choices: one whose SpMV kernel merely happens to be
        deterministic may take the vendor's faster algorithms that sum with atomics."""
        choices = [c for c in executor.block_choices(operands, deterministic) if vendor or not c.vendor]
        rule = executor.rule_choice(operands.k)
        if len(choices) < 2:
            return choices[0] if choices else rule
        try:
            raced, predicted = costed(executor, operands, choices, rule, device_profile())
            times = _time_choices(executor, operands, raced)
        except Exception as exc:
            if not _memory.gpu_out_of_memory(exc):
                raise
            return rule
        if predicted:
            predictions_of(executor)[block_key(operands)] = predicted
        if not times:
            return rule
        executor.block_times[block_key(operands)] = {c.label(executor.kernel): t for c, t in times.items()}
        return fastest(times)

    return plan


def fastest(times: dict):
    """The choice of ``times`` (choice -> µs) measured fastest, except that a vendor choice within RACE_TIE of
    one of ours takes its place (the fastest such)."""
    best = min(times, key=times.get)
    if not best.vendor:
        rivals = [c for c in times if c.vendor and times[c] <= times[best] * (1.0 + RACE_TIE)]
        best = min(rivals, key=lambda c: times[c]) if rivals else best
    return best


def can_time() -> bool:
    """Whether candidates can be timed now: not inside a CUDA graph capture on the current stream."""
    import cupy

    return not cupy.cuda.get_current_stream().is_capturing()


def plan_bucket(executor, operands, plan, rival=None) -> None:
    """Decide what block products of ``operands``' bucket of k and layout run on ``executor`` and push it down:
    each of its :meth:`block_executors` that runs block choices gets the one ``plan`` (a :func:`planner`) times
    fastest, then, with ``rival`` (a :class:`WholeRival`), the whole matrix runs the bucket where it wins."""
    for leaf in executor.block_executors():
        if hasattr(leaf, "set_block_choice"):
            leaf.set_block_choice(operands, plan(leaf, operands))
    if rival is not None and operands.k > 1:
        executor.set_whole(operands, rival(executor, operands, executor.built_whole()))


class WholeRival:
    """Whether a matrix's block products of one bucket of k and layout run on the matrix as stored or on the
    whole matrix as one CSR: the rival of a Cocktail's composed executor (its parts one after another) and of a
    single executor whose block products have no vendor choice (a format cuSPARSE's SpMM does not take).

    The matrix as stored is planned first (each of its executors by the block planner, :func:`plan_bucket`),
    and the whole matrix, gathered into one CSR on the device, gets the cuda executor of the CSR kernel the rules
    pick, planned by the same block planner (our CSR block kernels and each of cuSPARSE's SpMM algorithms).  The
    whole runs the bucket where its plan measured faster than the stored plans summed by more than RACE_TIE
    (within it, where its plan is the vendor's: the goal is never to be slower than the vendor).  The whole
    matrix's CSR is built on the first bucket that times it and kept only while a bucket runs it (the
    executor's :meth:`~cocktail.executors.base.Executor.set_whole` holds it), its launches bound with the matrix's
    launch policy ``yielding``.
    """

    def __init__(self, storage, deterministic: bool = False, vendor: bool = True, yielding: bool = False):
        self._storage, self._deterministic, self._yielding = storage, deterministic, yielding
        self._plan = planner(deterministic, vendor)

    @classmethod
    def wanted(cls, executor, storage) -> bool:
        """Whether ``executor`` of ``storage`` (a planned matrix's) gains from the rival: a composition of parts,
        or a single GPU kernel's executor on a format other than CSR (our CSR block kernels and cuSPARSE's CSR
        SpMM are not among its choices: COO's algorithms are others, HYB and PKT have no block kernel).  Without
        the vendor the whole races our CSR kernels alone."""
        from ..formats import CSR

        if executor.block_executors() != (executor,):  # a composition: its parts one after another
            return True
        return hasattr(executor, "block_specs") and not isinstance(storage, CSR)

    def __call__(self, executor, operands, whole=None):
        """The whole matrix's executor where it wins the bucket of ``operands`` against ``executor``'s planned
        block products (``whole``: the one built for another bucket), else None; both times go to
        ``executor.rival_times``."""
        key = block_key(operands)
        try:  # out of GPU memory for scratch blocks or the whole's CSR: the matrix as stored, as the planner does
            stored_us = _planned_us(executor.block_executors(), operands)
            if stored_us is None:
                return None
            whole = whole or self._whole()
            whole.set_block_choice(operands, self._plan(whole, operands))
            whole_us = _planned_us((whole,), operands)
        except Exception as exc:
            if not _memory.gpu_out_of_memory(exc):
                raise
            return None
        if whole_us is None:
            return None
        choice = whole.block_choice(operands)
        executor.__dict__.setdefault("rival_times", {})[key] = {
            "as stored": stored_us, f"whole matrix: {choice.label(whole.kernel)}": whole_us}
        tie = RACE_TIE if choice.vendor else -RACE_TIE
        return whole if whole_us <= stored_us * (1.0 + tie) else None

    def _whole(self):
        """The cuda executor of the whole matrix as one CSR, its launches bound with the matrix's launch policy
        (it is built on the first block product, maybe long after the matrix)."""
        from ..executors.cuda import create

        return create(self._storage.to_csr(), None, {}, required=False, deterministic=self._deterministic,
                      yielding=self._yielding)


def _planned_us(executors, operands) -> float | None:
    """The summed µs of ``executors``' planned block products of ``operands``' bucket and layout: what their
    block planners measured, each plan timed now where its planner timed nothing (a single choice: recorded in
    its ``block_times``); None where one cannot be timed (an executor without kernels)."""
    key, total = block_key(operands), 0.0
    for executor in executors:
        if not hasattr(executor, "block_choice"):
            return None
        choice = executor.block_choice(operands)
        label = choice.label(executor.kernel)
        us = executor.block_times.get(key, {}).get(label)
        if us is None:  # timed now, and kept beside what its planner timed
            us = _time_choices(executor, operands, [choice]).get(choice)
        if us is None:
            return None
        executor.block_times.setdefault(key, {})[label] = us
        total += us
    return total


def _layout(operands) -> str:
    """``"row"`` where X's and Y's rows are contiguous (scratch blocks in C order), else ``"col"`` (F order)."""
    return "row" if operands.x_steps[1] == 1 and operands.y_steps[1] == 1 else "col"


def _time_choices(executor, operands, choices) -> dict:
    """Median µs of one block product of each choice, on scratch blocks of ``operands``' shape and layout."""
    import cupy

    from ..kernels.block_operands import BlockOperands
    from ..timing import replay_us, side_stream

    m, n = executor._storage.shape
    k, dtype = operands.k, executor._storage.dtype
    order = "C" if _layout(operands) == "row" else "F"
    X = cupy.asarray(cupy.random.default_rng(0).standard_normal((n, k)).astype(dtype), order=order)
    Y = cupy.zeros((m, k), dtype=dtype, order=order)
    if order == "C" and any(c.spec is None for c in choices):  # the column loop's copies of the transposes
        Xt, Yt = cupy.empty((k, n), dtype=dtype), cupy.empty((k, m), dtype=dtype)
    scratch = BlockOperands.of(X, Y)
    stream = side_stream()
    one, zero = dtype.type(1), dtype.type(0)
    times = {}
    with stream:
        for choice in choices:
            try:
                launches = executor.bind_choice(choice, scratch)
            except CusparseError:  # an algorithm cuSPARSE refuses for these operands: not a candidate
                continue
            if launches is None and order == "F":  # one product per column on the columns themselves

                def call():
                    for j in range(k):
                        executor.run(X[:, j], Y[:, j], one, zero)
            elif launches is None:  # ... and through transposed copies of row-major blocks (Executor.run_block)

                def call():
                    cupy.copyto(Xt, X.T)
                    for j in range(k):
                        executor.run(Xt[j], Yt[j], one, zero)
                    cupy.copyto(Y, Yt.T)
            else:

                def call(launches=launches):
                    for launch in launches:
                        launch(X.data.ptr, Y.data.ptr, one, zero, stream.ptr)

            try:
                times[choice] = replay_us(call, BLOCK_RACE_CALLS, BLOCK_RACE_REPLAYS)
            except (CusparseError, RuntimeError):  # a vendor call its capture or the library refused
                if not choice.vendor:
                    raise
                continue
    stream.synchronize()
    return times


# --- costing block choices from the device profile's SpMM samples, racing only the promising ------------------

#: A choice is raced where its predicted time is within BLOCK_RACE_WITHIN times the best prediction, at most
#: BLOCK_RACE_MAX predicted choices in all (the rule's and the best-predicted vendor's always among them).
BLOCK_RACE_WITHIN, BLOCK_RACE_MAX = 2.0, 4
#: Products per timed graph of the one SpMV whose time the profile's ratios scale.
SPMV_CALLS = 8
#: GB/s (read plus written) assumed for the copies of a row-major block to and from its transpose where the
#: profile measured none: an assumption, about a third of an H100's DRAM bandwidth (a transposing copy reads or
#: writes with a stride on one side).
ASSUMED_TRANSPOSE_GBPS = 1000.0


def promising(choices, predicted: dict, rule, within: float = BLOCK_RACE_WITHIN, most: int = BLOCK_RACE_MAX) -> list:
    """The choices worth racing, in ``choices``' order: every one without a prediction (``predicted``: choice ->
    µs or None), the rule's, the vendor's predicted fastest (never slower than the vendor), then the others
    predicted within ``within`` times the best prediction, fastest first, until ``most`` predicted choices are
    kept."""
    known = sorted((c for c in choices if predicted.get(c) is not None), key=lambda c: predicted[c])
    keep = {c for c in choices if predicted.get(c) is None or c == rule}
    vendors = [c for c in known if c.vendor]
    if vendors:
        keep.add(vendors[0])
    count = len([c for c in known if c in keep])
    for c in known:
        if count >= most or predicted[c] > within * predicted[known[0]]:
            break
        if c not in keep:
            keep.add(c)
            count += 1
    return [c for c in choices if c in keep]


def device_profile():
    """The device profile of CuPy's current GPU (:func:`.profile.for_device`, which keeps it once read), or None
    where there is none (or no GPU)."""
    from . import profile

    try:
        return profile.for_device(profile.current_device())
    except (ImportError, RuntimeError):  # no CuPy, or no device to ask
        return None


def spmv_us(executor) -> float:
    """Median µs of one SpMV of ``executor`` on scratch vectors (graph replays, as the race times a block)."""
    from ..timing import executor_us

    return executor_us(executor, executor._storage.shape, executor._storage.dtype, SPMV_CALLS, BLOCK_RACE_REPLAYS)


def block_ratios(executor, operands, choices, prof) -> dict:
    """``{choice: µs of one block product / µs of one SpMV}`` predicted by ``prof`` for each block kernel of
    ``choices`` on ``executor``'s matrix (its rows and value slots per row), None where not sampled."""
    from .profile import spmm_key

    storage = executor._storage
    rows = storage.shape[0]
    per_row = storage.stored_slots / rows
    return {c: prof.predict_block_ratio(spmm_key(executor.kernel, c.label(executor.kernel)), _layout(operands),
                                        storage.dtype, rows, per_row, operands.k)
            for c in choices if c.spec is not None}


def column_loop_us(executor, operands, spmv: float, prof) -> float:
    """Predicted µs of one product per column: ``k`` SpMVs of ``spmv`` µs, and for row-major blocks the copies
    of X to its transpose and of Y's transpose back, (n + m) k values each read and written."""
    k = operands.k
    if _layout(operands) != "row":
        return k * spmv
    m, n = executor._storage.shape
    dtype = executor._storage.dtype
    gbps = prof.transpose_gbps(dtype) or ASSUMED_TRANSPOSE_GBPS
    return k * spmv + 2 * (n + m) * k * dtype.itemsize / (gbps * 1e3)


def costed(executor, operands, choices, rule, prof) -> tuple[list, dict]:
    """``(raced, predicted)``: the :func:`promising` of ``choices`` as ``prof`` predicts them on ``executor``'s
    matrix (one SpMV timed, scaled by the sampled ratios), and ``{label: µs}`` of those predicted; every choice
    and nothing predicted where ``prof`` has no SpMM samples of this executor's block kernels."""
    storage = getattr(executor, "_storage", None)
    if (prof is None or storage is None or not storage.shape[0] or not storage.stored_slots
            or not prof.has_spmm(storage.dtype, _layout(operands))):
        return list(choices), {}
    ratios = block_ratios(executor, operands, choices, prof)
    if all(r is None for r in ratios.values()):
        return list(choices), {}
    spmv = spmv_us(executor)
    predicted = {c: (column_loop_us(executor, operands, spmv, prof) if c.spec is None
                     else None if ratios[c] is None else spmv * ratios[c]) for c in choices}
    labels = {c.label(executor.kernel): us for c, us in predicted.items() if us is not None}
    return promising(choices, predicted, rule), labels


def predictions_of(executor) -> dict:
    """``executor``'s ``block_predicted``, made on first use: block_key -> {choice label: predicted µs}, what the
    planner predicted before racing (beside ``block_times``, what it measured)."""
    found = getattr(executor, "block_predicted", None)
    if found is None:
        found = executor.block_predicted = {}
    return found
