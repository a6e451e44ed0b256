"""Readable text about formats and ``format="auto"`` decisions.

Used by ``cocktail formats``, ``cocktail explain`` and ``SparseMatrix.explain()``.  It sits
above the tuning layer and below ``matrix``: it reads the formats, kernels and tuning rules
and never builds a ``SparseMatrix``.
"""

from __future__ import annotations

import re
import sys
import textwrap

from . import formats, kernels
from .formats import about

WIDTH = 80
#: Columns of the ``cocktail formats`` table: name, sentence, parameters (the rest of WIDTH).
_NAME_W, _SENTENCE_W, _GAP = 13, 35, 2
RULE_WORD = "auto (rule)"


# --- values and parameters -----------------------------------------------------------------
def value_text(value) -> str:
    """A parameter value as a user would type it: ``20`` for 20.0, a function by its name."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if callable(value):
        return getattr(value, "__name__", repr(value))
    return str(value)


def _param(fmt: str, key: str, value) -> str:
    if value is None:
        return about.unset_word(fmt, key)
    if fmt == "cocktail" and key == "parts" and isinstance(value, list):
        return " + ".join(f"{name}({params_text(name, p)})" if p else name for name, p in value)
    return value_text(value)


def params_text(fmt: str, params: dict) -> str:
    """``align=32, max_fill=20``: parameters of format ``fmt``, an unset one named by its word."""
    return ", ".join(f"{k}={_param(fmt, k, v)}" for k, v in params.items())


def storage_params_text(storage) -> str:
    """The parameters a stored matrix was built with, resolved: what the format picked for an unset
    one is shown with the reason (``width=5 (longest row)``, ``ell_width=3 (rule)``)."""
    shown = []
    for key, value in storage.resolved_params().items():
        text = f"{key}={_param(storage.name, key, value)}"
        if storage.params.get(key) is None and value is not None and key != "parts":
            word = about.unset_word(storage.name, key)
            text += " (rule)" if word.startswith("auto") else f" ({word})"
        shown.append(text)
    return ", ".join(shown) or "none"


def default_params(name: str, dtype="float64") -> dict:
    """Format ``name``'s parameters as ``SparseMatrix`` fills them in, as text: a rule's
    parameter is ``auto (rule)``, an unset one its word (``longest row``, ``off``)."""
    from .tuning.format_rules import format_params

    cls = formats.get(name)
    ruled = format_params(name, dtype, {})
    out = {}
    for key, value in cls.defaults.items():
        if callable(ruled.get(key)):
            out[key] = value_text(ruled[key])  # the rule itself (hyb's width_rule)
        elif key in ruled or (value is None and about.unset_word(name, key) == RULE_WORD):
            out[key] = RULE_WORD
        else:
            out[key] = _param(name, key, value)
    return out


# --- docstrings ------------------------------------------------------------------------------
_ROLE = re.compile(r":[a-z]+:`(~?)([^`]+)`")
_LITERAL = re.compile(r"``([^`]*)``")
_SEE_MODULE = re.compile(r",? ?\(?see the module docstring\)?", re.IGNORECASE)
_BULLET = re.compile(r"^\s*[-*] ")


def _role(match) -> str:
    target = match.group(2)
    return target.rsplit(".", 1)[-1] if match.group(1) else target


def clean_doc(text: str, width: int = WIDTH, indent: str = "") -> str:
    """A docstring as plain text: reST roles and literals unwrapped, paragraphs and bullet items
    rewrapped to ``width`` columns, pointers to other docstrings dropped."""
    text = _SEE_MODULE.sub("", _LITERAL.sub(r"\1", _ROLE.sub(_role, textwrap.dedent(text or ""))))
    text = text.replace("padding.DEFAULT_MAX_FILL", value_text(formats.get("ell").defaults["max_fill"]))
    out = []
    for para in re.split(r"\n\s*\n", text.strip()):
        items = []
        for line in para.splitlines():
            if _BULLET.match(line) or not items:
                items.append(line.strip())
            else:
                items[-1] += " " + line.strip()
        for item in items:
            hang = "  " if _BULLET.match(item) else ""
            out.append(textwrap.fill(item, width, initial_indent=indent, subsequent_indent=indent + hang))
        out.append("")
    return "\n".join(out).rstrip()


def _layout_doc(cls) -> str:
    """The module and class docstrings of a format, without the class's parameter paragraph
    (``cocktail formats NAME`` lists the parameters itself)."""
    module = sys.modules.get(cls.__module__)
    paras = [p for p in re.split(r"\n\s*\n", textwrap.dedent(cls.__doc__ or "").strip())
             if not p.lstrip().startswith("Parameters")]
    return "\n\n".join([(module.__doc__ or "").strip() if module else "", *paras]).strip()


# --- cocktail formats ------------------------------------------------------------------------
def formats_table(width: int = WIDTH) -> str:
    """``cocktail formats``: one row per format (name, when it wins, its parameters and defaults)."""
    param_w = width - _NAME_W - _SENTENCE_W - _GAP
    lines = [f"{'FORMAT':<{_NAME_W}}{'WHEN IT WINS':<{_SENTENCE_W + _GAP}}PARAMETERS (default)"]
    for name in formats.names():
        sentence = textwrap.wrap(about.summary(name), _SENTENCE_W, break_on_hyphens=False)
        params = [p for key, text in default_params(name).items() if not about.hidden_in_table(name, key)
                  for p in textwrap.wrap(f"{key}={text}", param_w, subsequent_indent="  ")] or ["none"]
        lines.append("")
        for i in range(max(len(sentence), len(params))):
            left = (name if i == 0 else "").ljust(_NAME_W)
            mid = (sentence[i] if i < len(sentence) else "").ljust(_SENTENCE_W + _GAP)
            lines.append((left + mid + (params[i] if i < len(params) else "")).rstrip())
    lines += ["", f"{RULE_WORD}: a tuning rule picks the value for each matrix and dtype.",
              "One format's parameters, GPU kernels and layout: cocktail formats NAME"]
    return "\n".join(lines)


def _kernel_lines(name: str) -> list[str]:
    specs = kernels.for_format(name)
    if name == "cocktail":
        return ["  each part runs its own format's kernel, one after another"]
    if not specs:
        return ["  none: products on the GPU run the reference path"]
    out = []
    for spec in specs:
        note = "" if spec.deterministic else " (not deterministic: atomics)"
        out += textwrap.wrap(f"{spec.name}: {spec.description}{note}", WIDTH, initial_indent="  ",
                             subsequent_indent="    ")
    return out


def format_details(name: str, width: int = WIDTH) -> str:
    """``cocktail formats NAME``: the sentence, parameters, kernels, byte model and layout of a format."""
    from .auto.fixed_rule import CPU_FORMATS

    cls = formats.get(name)
    wrap = (lambda text, first="  ", rest="  ": textwrap.wrap(text, width, initial_indent=first,
                                                              subsequent_indent=rest))
    lines = [name, *wrap(about.summary(name)), "", "Parameters (default):"]
    defaults = default_params(name)
    for key, text in defaults.items():
        lines += wrap(f"{key}={text}: {about.meaning(name, key)}", "  ", "      ")
    if not defaults:
        lines.append("  none")
    lines += ["", "GPU kernels:", *_kernel_lines(name)]
    cpu = ("each part's own CPU product" if name == "cocktail" else
           "SciPy's compiled product" if name in CPU_FORMATS else "the reference product (NumPy)")
    lines += ["", "On the CPU:", f"  {cpu}"]
    if about.traffic(name):
        lines += ["", "Bytes moved by one product (the byte model):", *wrap(about.traffic(name))]
    lines += ["", "Layout:", clean_doc(_layout_doc(cls), width, "  ")]
    return "\n".join(lines)


# --- format="auto" -----------------------------------------------------------------------------
def figures(value) -> str:
    """Three significant figures, without an exponent up to 99,999; ``-`` for nothing."""
    if value is None:
        return "-"
    return f"{value:.0f}" if 1000 <= abs(value) < 1e5 else f"{value:.3g}"


def _gflops(nnz: int, us) -> str:
    """GFLOP/s to three significant figures (small matrices run well under 1)."""
    return figures(2 * nnz / (us * 1e3) if us else None)


def feature_lines(f) -> list[str]:
    """A matrix's features (:class:`cocktail.auto.features.Features`), wrapped to WIDTH."""
    dense = len(f.dense_diagonals(0.9))
    facts = [f"{f.shape[0]:,} x {f.shape[1]:,}", f"{f.nnz:,} entries", f"mean row {f.mean_row:.1f}",
             f"longest row {f.max_row:,}", f"{f.distinct_values:,} distinct values",
             f"{len(f.diagonal_counts):,} diagonals ({dense} at least 90% full)"]
    if f.blocks:
        (r, c), stats = min(f.blocks.items(), key=lambda kv: kv[1].fill)
        facts.append(f"best block {r}x{c} at {stats.fill:.2f} slots per entry")
    return _join_wrapped(facts, "  features: ", " " * 12)


def _join_wrapped(items: list[str], first: str, rest: str) -> list[str]:
    """``items`` joined by commas into lines of at most WIDTH columns, never breaking an item."""
    lines = [first + items[0]]
    for item in items[1:]:
        if len(lines[-1]) + 2 + len(item) + 1 <= WIDTH:
            lines[-1] += ", " + item
        else:
            lines[-1] += ","
            lines.append(rest + item)
    return lines


def _predicted_why(cands, plan, nnz: int) -> str:
    """Why the planner's model chose ``plan`` among ``cands`` (fastest predicted first)."""
    if plan is not cands[0]:
        return "the faster predicted plans did not fit in GPU memory (see the notice)"
    text = f"fastest predicted of {len(cands)} candidate plans ({_gflops(nnz, plan.predicted_us)} GFLOP/s)"
    if len(cands) > 1:
        text += f"; next {cands[1].label(nnz)} at {_gflops(nnz, cands[1].predicted_us)} GFLOP/s"
    return text


def _why(report, nnz: int) -> str:
    """Why the planner's report chose its plan, in one sentence."""
    cands, plan = report.planning.candidates, report.plan
    if report.tune == "measure" and plan.measured_us:
        timed = sum(c.measured_us is not None for c in cands)
        return (f"fastest measured of the {timed} candidates timed on this matrix "
                f"({_gflops(nnz, plan.measured_us)} GFLOP/s)")
    if report.tune == "auto" and plan is not cands[0] and plan.measured_us and cands[0].measured_us:
        whose = "the vendor's kernel" if plan.single and plan.delegates else "a rival plan"
        return (f"{whose}, measured faster on this matrix's own products than the fastest predicted plan "
                f"{cands[0].label(nnz)} ({_gflops(nnz, plan.measured_us)} against "
                f"{_gflops(nnz, cands[0].measured_us)} GFLOP/s)")
    return _predicted_why(cands, plan, nnz)


def _plan_text(plan, nnz: int) -> str:
    """``csr_vector(t=4)``, or a Cocktail's label with its parts' detail."""
    return plan.label(nnz) if plan.single else f"{plan.label(nnz)}  ({plan.detail()})"


def candidate_lines(planning, chosen, nnz: int, measured: bool = True, top: int = 8) -> list[str]:
    """The best ``top`` candidate plans, the chosen one starred, with predicted (and measured) GFLOP/s."""
    head = "  candidates (predicted GFLOP/s" + (", measured GFLOP/s):" if measured else "):")
    lines = [head]
    for cand in planning.candidates[:top]:
        mark = "*" if cand is chosen else " "
        speeds = f"{_gflops(nnz, cand.predicted_us):>8}"
        if measured:
            speeds += f" {_gflops(nnz, cand.measured_us):>8}"
        lines.append(f"   {mark} {speeds}  {cand.label(nnz)}" + ("" if cand.single else f"  ({cand.detail()})"))
    return lines


def tuning_lines(report) -> list[str]:
    """What ``tune="auto"`` did so far on the matrix's own products (:mod:`cocktail.auto.online`)."""
    if not report.tuning:
        return textwrap.wrap("tuning: on the matrix's own products, from the first (none yet): it times its plan, "
                             "then tries the rivals the profile ranks close, within a few percent of the products' "
                             "time, and moves only to one it measured faster", WIDTH,
                             initial_indent="  ", subsequent_indent="    ")
    lines = ["  tuning on the matrix's own products:"]
    for call, words in report.tuning:
        lines += textwrap.wrap(f"product {call}: {words}", WIDTH, initial_indent="    ", subsequent_indent="      ")
    return lines


def auto_lines(report, nnz: int) -> list[str]:
    """``explain()``'s account of ``format="auto"`` on the GPU (a ``planning.AutoReport``)."""
    plan = report.plan
    lines = [f"  format='auto', tune={report.tune!r}: plan {_plan_text(plan, nnz)}"]
    if plan.delegates:
        lines += textwrap.wrap("delegates: " + ", ".join(f"{p.variant} to cuSPARSE's cusparseSpMV" for p in plan.parts
                                                         if p.vendor)
                               + " (the vendor's kernel was predicted fastest; vendor=False plans with Cocktail's "
                                 "own kernels only)", WIDTH, initial_indent="  ", subsequent_indent="    ")
    if report.notice:
        lines += textwrap.wrap(f"notice: {report.notice}", WIDTH, initial_indent="  ", subsequent_indent="    ")
    if report.cached:
        lines.append(f"  decision: reused from the decision cache (lookup {report.analysis_s * 1e3:.2f} ms, "
                     f"conversion {report.convert_s * 1e3:.1f} ms)")
        return lines + (tuning_lines(report) if report.tuning is not None else [])
    if report.planning is None:
        from .auto.fixed_rule import DIA_MAX_FILL, ELL_MAX_FILL, HYB_MAX_FILL

        lines.append(f"  why: no device profile to plan with, so the fixed rule of cocktail.auto.fixed_rule "
                     f"(dia, ell or hyb when they store at most {DIA_MAX_FILL}, {ELL_MAX_FILL} or {HYB_MAX_FILL} "
                     f"slots per entry, else csr)")
        return lines
    lines += textwrap.wrap(f"why: {_why(report, nnz)}", WIDTH, initial_indent="  ", subsequent_indent="    ")
    if report.tuning is not None:
        lines += tuning_lines(report)
    lines += feature_lines(report.planning.features)
    lines += [f"  time: analysis {report.analysis_s * 1e3:.1f} ms (features {report.features_s * 1e3:.1f} ms), "
              f"conversion {report.convert_s * 1e3:.1f} ms"
              + (f", measuring {report.measure_s * 1e3:.1f} ms" if report.measure_s else ""),
              f"  profile: {report.planning.profile_source}"]
    return lines + candidate_lines(report.planning, plan, nnz)


def shipped_profile(name: str):
    """The shipped device profile whose file is ``NAME.json`` (``h100``, ``h200``), or None when none ships."""
    from .auto import profile as profiles

    shipped = profiles.shipped()
    if not shipped:
        return None
    found = [p for p in shipped if p.source == f"shipped:{name.lower()}.json"]
    if not found:
        known = ", ".join(p.source.removeprefix("shipped:").removesuffix(".json") for p in shipped)
        raise ValueError(f"no shipped device profile {name!r}; shipped: {known}")
    return found[0]


def gpu_preview(csr, profile=None) -> str:
    """What ``format="auto"`` would plan on a GPU for the host CSR ``csr``: the planner run on
    features computed here with ``profile`` (default: the shipped H100 profile, else the first shipped)."""
    from .auto import features, planner
    from .auto import profile as profiles
    from .auto.fixed_rule import choice_reason

    head = "On a GPU (not run here), format='auto' would"
    if csr.nnz == 0:
        return textwrap.fill(f"{head} not plan: the planner takes matrices with entries; "
                             f"{choice_reason(csr)}", WIDTH, subsequent_indent="  ")
    if profile is None:
        shipped = profiles.shipped()
        if not shipped:
            return textwrap.fill(f"{head} need a device profile: none ships with this install; run "
                                 "'cocktail calibrate' on the GPU", WIDTH, subsequent_indent="  ")
        profile = next((p for p in shipped if "H100" in p.device["name"]), shipped[0])
    feats = features.compute(csr, block_fill_limit=planner.block_fill_limit(csr.dtype, csr.index_dtype))
    planning = planner.plan(csr, feats, profile, csr.dtype)
    chosen = planning.chosen
    lines = textwrap.wrap(f"{head} plan {chosen.label(csr.nnz)} with the {profile.device['name']} profile "
                          f"({profile.source}; a GPU uses its own profile when calibrated):", WIDTH)
    lines += [f"  plan: {_plan_text(chosen, csr.nnz)}",
              *textwrap.wrap(f"why: {_predicted_why(planning.candidates, chosen, csr.nnz)}", WIDTH,
                             initial_indent="  ", subsequent_indent="    ")]
    lines += feature_lines(feats) + candidate_lines(planning, chosen, csr.nnz, measured=False, top=5)
    return "\n".join(lines)
