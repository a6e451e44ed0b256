"""Each kernel declares, in its own module, what the rest of the package needs of it: its launch
configuration and the formats it is the default of; a missing piece fails here, by name."""

from __future__ import annotations

import pytest

from cocktail import formats, kernels
from cocktail.kernels.spec import CSR_FORMATS, KernelSpec
from cocktail.tuning import kernel_rules, launch_rules


def test_every_kernel_declares_its_configuration():
    for name in kernels.names():
        spec = kernels.get(name)
        assert callable(spec.configure), name
        assert set(spec.default_for) <= set(spec.formats), name  # a default only of a format it multiplies


def test_a_kernel_spec_without_a_configuration_is_refused_by_name():
    with pytest.raises(TypeError, match="configure"):
        KernelSpec(name="throwaway", formats=("csr",), expressions=lambda v, i: [], bind=lambda *a: [])


def test_every_format_has_exactly_one_default_kernel_without_a_row_rule():
    claimed = [(fmt, name) for name in kernels.names() for fmt in kernels.get(name).default_for
               if kernels.get(name).default_when is None]
    fmts = [fmt for fmt, _ in claimed]
    assert len(fmts) == len(set(fmts)), f"a format claimed by two kernels: {claimed}"
    # a Cocktail's parts each have their own kernel
    assert set(fmts) == set(formats.names()) - {"cocktail"}
    # the CSR formats' other kernels each have a row rule, and no two of one format the same precedence
    for fmt in CSR_FORMATS:
        ruled = [kernels.get(n) for n in kernels.names()
                 if fmt in kernels.get(n).default_for and kernels.get(n).default_when is not None]
        assert ruled and len({s.precedence for s in ruled}) == len(ruled)
    assert kernel_rules.format_kernels()["coo"] == "coo_atomic"


def test_the_rule_book_holds_every_rule_the_package_asks_for():
    """Every ``rules.X`` a kernel's ``configure`` or ``prepare`` reads (its ``rules`` parameter) and every
    ``RULES.X`` anywhere in the package is an attribute of the rule book (read from the sources)."""
    import re
    from pathlib import Path

    import cocktail

    root = Path(cocktail.__file__).parent
    asked = {(path.relative_to(root), name) for path in (root / "kernels").rglob("*.py")
             for name in re.findall(r"(?<![\w.])rules\.(\w+)", path.read_text())}
    asked |= {(path.relative_to(root), name) for path in root.rglob("*.py")
              for name in re.findall(r"\bRULES\.(\w+)", path.read_text())}
    assert len(asked) >= 12
    missing = sorted((str(where), name) for where, name in asked
                     if name != "py" and not hasattr(launch_rules.RULES, name))  # "py": a rules.py named in words
    assert not missing, missing


def test_every_sampled_setting_is_one_its_kernel_and_format_take():
    from cocktail.auto import variants

    keys = [v.key for v in variants.VARIANTS]
    assert len(keys) == len(set(keys)), "two kernels sample a setting under one key"
    for v in variants.VARIANTS:
        spec = kernels.get(v.kernel)
        assert v.format in spec.formats, v.key
        spec.resolve_params(dict(v.kernel_params))  # TypeError names a parameter the kernel lacks
        formats.get(v.format).resolve_params(dict(v.format_params))
    # the profile's variants are what the kernels declare, in the registry's order
    expanded = [f"{s.key}({r}x{c})" if s.per_block else s.key
                for name in kernels.names() for s in kernels.get(name).profile
                for r, c in (variants.BLOCK_SIZES if s.per_block else [(None, None)])]
    assert keys == expanded


#: The profile's variants as they were when each kernel came to declare its own: the planner breaks exact
#: ties by this order, so a kernel added later may come anywhere, but these keep their order.
PROFILE_ORDER = (
    "csr_scalar", "csr_vector(t=2)", "csr_vector(t=4)", "csr_vector(t=8)", "csr_vector(t=16)",
    "csr_vector(t=32)", "csr_merge", "csr_stream(k=8)", "csr_stream(k=16)", "coo_atomic", "coo_segmented",
    "ell", "cusparse_csr(alg=1)", "cusparse_csr(alg=2)", "cusparse_coo(alg=1)", "cusparse_coo(alg=2)",
    "sell(C=32,t=1)", "sell(C=32,t=2)", "sell(C=32,t=4)", "sell(C=32,t=8)", "sell(C=64,t=1)", "sell(C=64,t=2)",
    "sell(C=64,t=4)", "sell(C=64,t=8)", "sell(C=128,t=1)", "sell(C=128,t=2)", "sell(C=128,t=4)",
    "sell(C=128,t=8)", "sell(C=256,t=1)", "sell(C=256,t=2)", "sell(C=256,t=4)", "sell(C=256,t=8)", "dia",
    "bdia", "bdia_direct", "dia_vi", "bcsr(1x4)", "bcsr(2x4)", "bcsr(4x4)", "bcsr(8x4)", "bcsr(1x8)",
    "bcsr(2x8)", "bcsr(4x8)", "bcsr(8x8)", "bcsr(2x2)", "bcsr(3x3)", "bell(1x4)", "bell(2x4)", "bell(4x4)",
    "bell(8x4)", "bell(1x8)", "bell(2x8)", "bell(4x8)", "bell(8x8)", "bell(2x2)", "bell(3x3)", "sbell(1x4)",
    "sbell(2x4)", "sbell(4x4)", "sbell(8x4)", "sbell(1x8)", "sbell(2x8)", "sbell(4x8)", "sbell(8x8)",
    "sbell(2x2)", "sbell(3x3)",
)


def test_the_profile_keeps_its_order_of_variants():
    from cocktail.auto import variants

    assert [k for k in variants.keys() if k in PROFILE_ORDER] == list(PROFILE_ORDER)
