"""Each kernel declares, in its own module, what the rest of the package needs of it: its launch
configuration and the formats it is the default of; a missing piece fails here, by name."""

from __future__ import annotations

import pytest

from cocktail import formats, kernels
from cocktail.kernels.spec import KernelSpec
from cocktail.tuning import kernel_rules, launch_rules


def test_every_kernel_declares_its_configuration():
    for name in kernels.names():
        spec = kernels.get(name)
        assert callable(spec.configure), name
        assert set(spec.default_for) <= set(spec.formats), name  # a default only of a format it multiplies


def test_a_kernel_spec_without_a_configuration_is_refused_by_name():
    with pytest.raises(TypeError, match="configure"):
        KernelSpec(name="throwaway", formats=("csr",), expressions=lambda v, i: [], bind=lambda *a: [])


def test_every_format_but_csr_has_exactly_one_default_kernel():
    claimed = [(fmt, name) for name in kernels.names() for fmt in kernels.get(name).default_for]
    fmts = [fmt for fmt, _ in claimed]
    assert len(fmts) == len(set(fmts)), f"a format claimed by two kernels: {claimed}"
    # csr's kernel comes from a rule over its row lengths; a Cocktail's parts each have their own
    assert set(fmts) == set(formats.names()) - {"csr", "cocktail"}
    assert kernel_rules.format_kernels()["coo"] == "coo_atomic"


def test_the_rule_book_holds_every_rule_a_kernel_asks_for():
    for name in ("BLOCK_THREADS", "csr_vector_threads", "sell_threads", "bcsr_threads", "coo_omega",
                 "cores_per_sm", "bdia_piece_width", "csr_stream_shape", "dia_vi_rows_per_thread",
                 "MERGE_ITEMS_PER_THREAD", "STREAM_ITEMS_PER_LANE", "CUSPARSE_ALG", "coo", "scale_block", "part"):
        assert hasattr(launch_rules.RULES, name), name


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
