"""Cross-method buffers under lifecycle models: each mechanism in both directions."""

from __future__ import annotations

import textwrap

import pytest

from zeroopt.analysis.lifecycles import lifecycles_from_config
from zeroopt.analysis.options import AnalysisOptions
from zeroopt.scan.file_analysis import analyse_source
from zeroopt.scan.findings import Finding, LifecycleReport, Verdict

HEADER = "import torch\nfrom flash_attn.cute import flash_attn_varlen_func\nfrom flash_attn import flash_attn_with_kvcache\n\n"


def backend(
    init: str, capture: str, replay: str, forward: str, extra: str = "", eager: str | None = None
) -> str:
    """A backend in SGLang's shape; the eager setup does what the replay setup does unless told."""

    def body(code: str) -> str:
        return textwrap.indent(textwrap.dedent(code).strip() or "pass", "        ")

    return HEADER + (
        "class Backend:\n"
        "    def init_cuda_graph_state(self, max_bs):\n" + body(init) + "\n\n"
        "    def init_forward_metadata_capture_cuda_graph(self, bs, seq_lens):\n"
        + body(capture)
        + "\n\n"
        "    def init_forward_metadata_replay_cuda_graph(self, bs, seq_lens):\n"
        + body(replay)
        + "\n\n"
        "    def init_forward_metadata(self, bs, seq_lens):\n"
        + body(replay if eager is None else eager)
        + "\n\n"
        "    def forward_decode(self, q, k, v):\n"
        + body(forward)
        + "\n"
        + textwrap.indent(textwrap.dedent(extra), "    ")
    )


def only(source: str, options: AnalysisOptions | None = None) -> Finding:
    result = analyse_source(source, "backend.py", options)
    assert not result.errors, result.errors
    zeros = [f for f in result.findings if f.rule == "ZO001"]
    assert len(zeros) == 1, zeros
    return zeros[0]


def test_read_in_warmup_before_replay_write_is_unsafe_with_both_lines() -> None:
    f = only(
        backend(
            "self.lens = torch.zeros(max_bs)",
            "self.bs = bs",
            "self.lens.copy_(seq_lens)",
            "return q * self.lens.sum()",
        )
    )
    assert f.verdict is Verdict.UNSAFE
    assert "lifecycle sglang-attention-backend" in f.message
    assert any("capture warm-up" in e.text and e.kind == "read" for e in f.evidence)
    assert any(e.kind == "alloc" for e in f.evidence)


def test_written_in_full_by_every_setup_before_forward_is_safe() -> None:
    f = only(
        backend(
            "self.lens = torch.zeros(max_bs)",
            "self.lens.fill_(1)",
            "self.lens.copy_(seq_lens)",
            "return q * self.lens.sum()",
        )
    )
    assert f.verdict is Verdict.SAFE
    assert f.fix is not None and f.fix.replacement.startswith("torch.empty")


def test_eager_path_without_setup_write_is_not_safe() -> None:
    src = backend(
        "self.lens = torch.zeros(max_bs)",
        "self.lens.fill_(1)",
        "self.lens.copy_(seq_lens)",
        "return q * self.lens.sum()",
        eager="self.other = seq_lens",
    )
    # A wrapper may call init_cuda_graph_state and then only eager steps on this object (a
    # hybrid backend's prefill half): the eager forward reads what nobody wrote.
    assert only(src).verdict is Verdict.UNSAFE


def test_buffer_of_init_written_only_when_graphs_are_enabled_is_not_safe() -> None:
    """init_cuda_graph_state runs only with CUDA graphs enabled: an eager-only run reads an
    `__init__` buffer that nothing wrote."""
    src = backend(
        "self.lens.fill_(1)",
        "self.lens.fill_(2)",
        "self.lens.copy_(seq_lens)",
        "return q * self.lens.sum()",
        eager="self.other = seq_lens",
        extra="def __init__(self, max_bs=4):\n    self.lens = torch.zeros(max_bs)\n",
    )
    f = only(src)
    assert f.verdict is Verdict.UNSAFE, f.message
    assert any("eager" in e.text and e.kind == "read" for e in f.evidence), f.evidence


def test_partial_writes_then_full_read_is_unproven() -> None:
    f = only(
        backend(
            "self.lens = torch.zeros(max_bs)",
            "self.lens[:bs].copy_(seq_lens)",
            "self.lens[:bs].copy_(seq_lens)",
            "return q * self.lens.sum()",
        )
    )
    assert f.verdict is Verdict.UNPROVEN


def test_no_lifecycle_model_is_judged_under_any_order_of_methods() -> None:
    """No model matches: the class is judged under any order of its methods
    (analysis/lifecycle_anyorder.py), which the closed world gates."""
    src = (
        HEADER
        + "class Plain:\n    def __init__(self, n):\n        self.lens = torch.zeros(n)\n\n    def run(self):\n        self.lens.fill_(1)\n        return self.lens.sum()\n"
    )
    f = only(src)
    assert f.verdict is Verdict.SAFE
    assert f.message.startswith("any order of Plain's methods after __init__")
    assert any("closed world" in e.text for e in f.evidence if e.kind == "assumption")
    f = only(src, AnalysisOptions(closed_world=False))
    assert f.verdict is Verdict.UNPROVEN
    assert "lifecycle" not in f.message and "any order" not in f.message


def test_page_table_is_coupled_to_its_lengths() -> None:
    f = only(
        backend(
            "self.pt = torch.zeros(max_bs, 16, dtype=torch.int32)",
            "self.pt[:bs, :2].copy_(seq_lens)",
            "self.pt[:bs, :2].copy_(seq_lens)",
            "return flash_attn_varlen_func(q, k, v, seqused_k=self.lens_arg, page_table=self.pt)",
        )
    )
    assert f.verdict is Verdict.UNPROVEN
    assert any(e.kind == "read" and "coupled" in e.text for e in f.evidence)


def test_page_table_never_written_is_unsafe() -> None:
    f = only(
        backend(
            "self.pt = torch.zeros(max_bs, 16, dtype=torch.int32)",
            "pass",
            "pass",
            "return flash_attn_varlen_func(q, k, v, seqused_k=self.lens_arg, page_table=self.pt)",
        )
    )
    assert f.verdict is Verdict.UNSAFE


def test_new_kv_lengths_unread_without_new_kv() -> None:
    forward = (
        "return flash_attn_with_kvcache(q, k, v, cache_seqlens=self.l, cu_seqlens_k_new=self.cu)"
    )
    assert (
        only(
            backend("self.cu = torch.zeros(max_bs + 1, dtype=torch.int32)", "", "", forward)
        ).verdict
        is Verdict.SAFE
    )
    with_new = "return flash_attn_with_kvcache(q, k, v, k=q, v=q, cache_seqlens=self.l, cu_seqlens_k_new=self.cu)"
    assert (
        only(
            backend("self.cu = torch.zeros(max_bs + 1, dtype=torch.int32)", "", "", with_new)
        ).verdict
        is Verdict.UNSAFE
    )


def test_unknown_kernel_handed_the_buffer_is_unproven() -> None:
    f = only(
        backend(
            "self.lens = torch.zeros(max_bs)",
            "self.lens.fill_(1)",
            "self.lens.fill_(1)",
            "my_kernel(self.lens)\nreturn q",
        )
    )
    assert f.verdict is Verdict.SAFE  # written in full before the kernel ever sees it
    g = only(
        backend(
            "self.lens = torch.zeros(max_bs)",
            "",
            "self.lens.fill_(1)",
            "my_kernel(self.lens)\nreturn q",
        )
    )
    assert g.verdict is Verdict.UNPROVEN


def test_helper_methods_are_inlined() -> None:
    extra = """
    def _refresh(self, seq_lens):
        self.lens.copy_(seq_lens)
    """
    f = only(
        backend(
            "self.lens = torch.zeros(max_bs)",
            "self._refresh(seq_lens)",
            "self._refresh(seq_lens)",
            "return q * self.lens.sum()",
            extra,
        )
    )
    assert f.verdict is Verdict.SAFE


def test_early_return_in_helper_skips_the_write() -> None:
    extra = """
    def _refresh(self, seq_lens):
        if seq_lens is None:
            return
        self.lens.copy_(seq_lens)
    """
    f = only(
        backend(
            "self.lens = torch.zeros(max_bs)",
            "self._refresh(seq_lens)",
            "self._refresh(seq_lens)",
            "return q * self.lens.sum()",
            extra,
        )
    )
    assert f.verdict is Verdict.UNSAFE


def test_locals_of_different_methods_do_not_alias() -> None:
    # `view` in the capture setup is not `view` in forward: forward's write goes elsewhere.
    f = only(
        backend(
            "self.lens = torch.zeros(max_bs)",
            "view = self.lens",
            "view = self.lens",
            "view = q\nview.fill_(1)\nreturn self.lens.sum()",
        )
    )
    assert f.verdict is Verdict.UNSAFE


def test_self_passed_to_unknown_code_is_unproven() -> None:
    f = only(
        backend(
            "self.lens = torch.zeros(max_bs)",
            "register(self)\nself.lens.fill_(1)",
            "self.lens.fill_(1)",
            "return q * self.lens.sum()",
        )
    )
    assert f.verdict is Verdict.UNPROVEN


def test_subclass_overriding_lifecycle_methods_is_unproven() -> None:
    src = backend(
        "self.lens = torch.zeros(max_bs)",
        "self.lens.fill_(1)",
        "self.lens.copy_(seq_lens)",
        "return q * self.lens.sum()",
    )
    src += "\n\nclass Child(Backend):\n    def init_forward_metadata_replay_cuda_graph(self, bs, seq_lens):\n        pass\n"
    f = only(src)
    assert f.verdict is Verdict.UNPROVEN and "subclass `Child` (line 22)" in f.message


def test_dict_entries_are_named_and_tracked() -> None:
    f = only(
        backend(
            'self.meta = {"lens": torch.zeros(max_bs)}',
            'self.meta["lens"].fill_(1)',
            'self.meta["lens"].fill_(2)',
            'return q * self.meta["lens"].sum()',
        )
    )
    assert f.target == 'self.meta["lens"]'
    assert f.verdict is Verdict.SAFE
    g = only(
        backend(
            'self.meta = {"lens": torch.zeros(max_bs)}',
            'self.total = self.meta.get("lens").sum()\nself.meta["lens"].fill_(1)',
            'self.meta["lens"].fill_(2)',
            "return q",
        )
    )
    assert (
        g.verdict is Verdict.UNPROVEN
    )  # .get on the dict reads the entry behind the analysis' back


RUNNER = HEADER + textwrap.dedent("""
    class Runner:
        def setup(self, n):
            self.buf = torch.zeros(n)

        def prepare(self, x):
            self.buf.copy_(x)

        def step(self):
            return self.buf.sum()
    """)
RUNNER_MODEL = lifecycles_from_config(
    {
        "runner": {
            "requires": ["prepare", "step"],
            "init": ["setup"],
            "cycles": [{"name": "run", "setup": ["prepare"]}],
            "forward": ["step"],
        }
    }
)


def test_user_declared_lifecycle() -> None:
    assert only(RUNNER).verdict is Verdict.UNPROVEN
    assert only(RUNNER, AnalysisOptions(lifecycles=RUNNER_MODEL)).verdict is Verdict.SAFE


def test_lifecycle_table_lists_phases() -> None:
    result = analyse_source(
        backend(
            "self.lens = torch.zeros(max_bs)",
            "self.bs = bs",
            "self.lens.copy_(seq_lens)",
            "return q * self.lens.sum()",
        ),
        "b.py",
    )
    (report,) = result.lifecycles
    (row,) = report.buffers
    assert report.class_name == "Backend" and report.model == "sglang-attention-backend"
    assert any("replay" in p for p in row.written)
    assert any("capture warm-up" in p for p in row.read)


def test_stored_callables_do_not_receive_self_but_methods_do() -> None:
    init = "self.lens = torch.zeros(max_bs)\nself.helper_fn = make_helper()"
    f = only(
        backend(
            init,
            "self.helper_fn(bs)\nself.lens.fill_(1)",
            "self.lens.fill_(1)",
            "return q * self.lens.sum()",
        )
    )
    assert f.verdict is Verdict.SAFE
    g = only(
        backend(
            "self.lens = torch.zeros(max_bs)",
            "x = 1 + self.inherited_hook(bs)\nself.lens.fill_(1)",
            "self.lens.fill_(1)",
            "return q * self.lens.sum()",
        )
    )
    assert g.verdict is Verdict.UNPROVEN  # a method we cannot see is handed `self`


def test_self_calls_in_if_tests_and_returns_are_inlined() -> None:
    extra = """
    def _enabled(self, bs):
        return bs > 0

    def _refresh(self, seq_lens):
        self.lens.copy_(seq_lens)
        return True
    """
    capture = "if self._enabled(bs):\n    pass\nif not self._refresh(seq_lens):\n    pass"
    f = only(
        backend(
            "self.lens = torch.zeros(max_bs)",
            capture,
            "self.lens.fill_(1)",
            "return q * self.lens.sum()",
            extra,
        )
    )
    assert f.verdict is Verdict.SAFE
    peek = """
    def _peek(self):
        return self.lens.sum()
    """
    g = only(
        backend(
            "self.lens = torch.zeros(max_bs)",
            "if self._peek():\n    pass\nself.lens.fill_(1)",
            "self.lens.fill_(1)",
            "return q",
            peek,
        )
    )
    assert g.verdict is Verdict.UNSAFE  # the inlined test reads before the write
    h = only(
        backend(
            "self.lens = torch.zeros(max_bs)",
            "if self._peek() > 0:\n    pass\nself.lens.fill_(1)",
            "self.lens.fill_(1)",
            "return q",
            peek,
        )
    )
    assert (
        h.verdict is Verdict.UNPROVEN
    )  # not the first thing evaluated: not inlined, self handed over


def test_a_model_whose_methods_the_class_lacks_does_not_apply() -> None:
    # Matches the runner model's `requires` by name, but runs none of its cycles: judging it
    # under that model would see no use at all and call an accumulator "never read".
    src = HEADER + textwrap.dedent("""
        class Plugin:
            def __init__(self):
                self.counts = torch.zeros((2,), dtype=torch.int32)

            def capture_one_batch_size(self, batch, num_tokens: int):
                self.counts += 1

            def replay_prepare(self, bs: int):
                return self.counts.sum()
        """)
    f = only(src)
    # Judged under any order of its methods instead: the accumulator is read before any write.
    assert f.verdict is Verdict.UNSAFE and "lifecycle" not in f.message
    assert f.message.startswith("any order of Plugin's methods")


def test_a_method_outside_the_model_that_touches_the_buffer_is_unproven() -> None:
    extra = """
    def idle_stats(self):
        return self.lens.sum()
    """
    f = only(
        backend(
            "self.lens = torch.zeros(max_bs)",
            "self.lens.fill_(1)",
            "self.lens.copy_(seq_lens)",
            "return q * self.lens.sum()",
            extra,
        )
    )
    assert f.verdict is Verdict.UNPROVEN
    assert "idle_stats" in f.message


# --- metadata objects: views stored in a record per batch size, written and read through it ---

RECORD = (
    "from dataclasses import dataclass\n\n\n@dataclass\nclass Meta:\n"
    "    lens: torch.Tensor = None\n    table: torch.Tensor = None\n\n\n"
)
CAPTURE_VIEWS = """
lens = self.state["lens"][:bs]
lens.copy_(seq_lens)
meta = Meta(lens=lens, table=self.state["table"][:bs])
meta.table.fill_(0)
self.graph_meta[bs] = meta
self.forward_metadata = meta
"""
REPLAY_VIEWS = """
meta = self.graph_meta[bs]
meta.lens.copy_(seq_lens)
meta.table.copy_(seq_lens[:, None])
self.forward_metadata = meta
"""
EAGER_FRESH = "self.forward_metadata = Meta(lens=seq_lens, table=seq_lens[:, None])"
FORWARD_FA = """
meta = self.forward_metadata
return flash_attn_varlen_func(q, k, v, seqused_k=meta.lens, page_table=meta.table)
"""
STATE = """
self.graph_meta = {}
self.state = {"lens": torch.zeros(max_bs, dtype=torch.int32), "table": torch.ones(max_bs, 4)}
"""


def with_record(src: str) -> str:
    return src.replace(HEADER, HEADER + RECORD, 1)


def test_view_in_record_written_in_full_by_every_setup_is_safe_with_evidence() -> None:
    f = only(
        with_record(backend(STATE, CAPTURE_VIEWS, REPLAY_VIEWS, FORWARD_FA, eager=EAGER_FRESH))
    )
    assert f.verdict is Verdict.SAFE, f.message
    assert "read only through views written in full" in f.message
    kinds = {e.kind for e in f.evidence}
    assert {"view-write", "view-read"} <= kinds
    assert any("replay" in e.text and e.kind == "view-write" for e in f.evidence)


def test_replay_writing_part_of_the_record_view_is_not_safe() -> None:
    replay = REPLAY_VIEWS.replace("meta.lens.copy_(seq_lens)", "meta.lens[:2].copy_(seq_lens)")
    f = only(with_record(backend(STATE, CAPTURE_VIEWS, replay, FORWARD_FA, eager=EAGER_FRESH)))
    assert f.verdict is Verdict.UNPROVEN, f.message
    assert "replay" in f.message


def test_capture_binding_the_view_without_writing_it_is_unsafe() -> None:
    capture = CAPTURE_VIEWS.replace("lens.copy_(seq_lens)\n", "")
    f = only(with_record(backend(STATE, capture, REPLAY_VIEWS, FORWARD_FA, eager=EAGER_FRESH)))
    # Unsafe on the path where the capture comes first after the graph state; a replay may also
    # come first (nothing forces a capture first), so the dataflow may only say `unproven`.
    assert f.verdict in (Verdict.UNSAFE, Verdict.UNPROVEN), f.message
    assert "capture warm-up" in f.message


def test_computed_key_store_may_replace_a_named_entry() -> None:
    # `self.state[bs] = meta` may overwrite `self.state["lens"]` (bs could be "lens"), so the
    # replay's write through `self.state["lens"]` no longer provably writes the buffer.
    capture = CAPTURE_VIEWS.replace("self.graph_meta[bs] = meta", "self.state[bs] = meta")
    replay = 'self.state["lens"].copy_(seq_lens)\nself.forward_metadata = Meta(lens=self.state["lens"], table=seq_lens[:, None])'
    f = only(with_record(backend(STATE, capture, replay, FORWARD_FA, eager=EAGER_FRESH)))
    assert f.verdict is not Verdict.SAFE, f.message


def _report(source: str) -> LifecycleReport:
    result = analyse_source(source, "backend.py")
    assert not result.errors, result.errors
    (report,) = result.lifecycles
    return report


def test_page_table_and_its_lengths_are_reported_as_one_coupled_group() -> None:
    report = _report(
        backend(
            "self.pt = torch.zeros(max_bs, 16, dtype=torch.int32)\n"
            "self.lens = torch.zeros(max_bs, dtype=torch.int32)",
            "self.lens.copy_(seq_lens)",
            "self.lens.copy_(seq_lens)",
            "return flash_attn_varlen_func(q, k, v, seqused_k=self.lens, page_table=self.pt)",
        )
    )
    assert report.coupled_groups == ((("self.pt", 7), ("self.lens", 8)),)
    by_target = {b.target: b for b in report.buffers}
    # The lengths are written in full by every setup: safe on their own. The table is read up
    # to their values and never written: not safe, whatever the lengths hold.
    assert by_target["self.lens"].verdict is Verdict.SAFE
    assert by_target["self.pt"].verdict is Verdict.UNSAFE
    assert LifecycleReport.from_json(report.to_json()) == report


def test_buffers_passed_to_unrelated_calls_form_no_group() -> None:
    report = _report(
        backend(
            "self.pt = torch.zeros(max_bs, 16, dtype=torch.int32)\n"
            "self.lens = torch.zeros(max_bs, dtype=torch.int32)",
            "self.lens.copy_(seq_lens)",
            "self.lens.copy_(seq_lens)",
            # The table's rows are bounded by another tensor; the lengths go to another call.
            "o = flash_attn_varlen_func(q, k, v, seqused_k=self.other, page_table=self.pt)\n"
            "return flash_attn_varlen_func(q, k, v, seqused_k=self.lens, page_table=self.pt2)",
        )
    )
    assert report.coupled_groups == ()
    assert {b.target for b in report.buffers} == {"self.pt", "self.lens"}


_SAFE_PARTS = (
    "self.lens = torch.zeros(max_bs)",
    "self.lens.fill_(1)",
    "self.lens.copy_(seq_lens)",
    "return q * self.lens.sum()",
)


@pytest.mark.parametrize(
    ("header", "judged"),
    [
        ("class Backend(object):", True),
        (
            "from sglang.srt.layers.attention.base_attn_backend import AttentionBackend\n\n\n"
            "class Backend(AttentionBackend):",
            True,  # the model's default base: its forward_extend & co. are the harmless defaults
        ),
        ("from elsewhere import SomeBackend\n\n\nclass Backend(SomeBackend):", False),
        ("class Mixin:\n    pass\n\n\nclass Backend(Mixin):", False),
    ],
)
def test_a_class_is_judged_only_if_its_bases_cannot_supply_modelled_methods(
    header: str, judged: bool
) -> None:
    f = only(backend(*_SAFE_PARTS).replace("class Backend:", header))
    assert (f.verdict is Verdict.SAFE) is judged, f.message
    if not judged:
        assert "base" in f.message or "inherit" in f.message


@pytest.mark.parametrize(
    "store", ["self.head = self.lens[:1]", "self.head, self.n = self.lens[:1], 0"]
)
def test_an_outside_method_reading_a_second_name_of_the_buffer_is_unproven(store: str) -> None:
    src = backend(
        f"self.lens = torch.zeros(max_bs)\n{store}",
        "self.lens.fill_(1)",
        "self.lens.copy_(seq_lens)",
        "return q * self.lens.sum()",
        extra="    def can_run(self):\n        return self.head.item() == 0\n",
    )
    f = only(src)
    assert f.verdict is Verdict.UNPROVEN and "`self.head` (it may hold `self.lens`)" in f.message


SGLANG_BASE = "from sglang.srt.layers.attention.base_attn_backend import AttentionBackend\n\n\n"


@pytest.mark.parametrize(
    ("call", "judged"),
    [
        ("super().__init__()", True),  # the default base has no __init__ of its own: object's
        ("super().init_forward_metadata(bs, seq_lens)", False),  # runs out_graph/in_graph on self
        ("super().forward(q, k, v)", False),  # dispatches to the forward methods on self
        ("helper = super()", False),  # a super object handed on
    ],
)
def test_super_into_the_default_base(call: str, judged: bool) -> None:
    src = backend(
        "self.lens = torch.zeros(max_bs)",
        "self.lens.fill_(1)",
        "self.lens.copy_(seq_lens)",
        "return q * self.lens.sum()",
        eager=f"{call}\nself.lens.copy_(seq_lens)",
    ).replace("class Backend:", SGLANG_BASE + "class Backend(AttentionBackend):")
    f = only(src)
    if judged:
        assert f.verdict is Verdict.SAFE, f.message
    else:
        assert f.verdict is Verdict.UNPROVEN, f.message
        assert "runs code of a base the model does not know" in f.message
        assert "method `init_forward_metadata` (line" in f.message


def test_vllm_builder_calling_its_default_base_init_is_judged() -> None:
    src = (
        "import torch\nfrom vllm.v1.attention.backend import AttentionMetadataBuilder\n\n\n"
        "class Builder(AttentionMetadataBuilder[object]):\n"
        "    def __init__(self, spec, names, config, device):\n"
        "        super().__init__(spec, names, config, device)\n"
        "        self.seq_lens = torch.zeros(4)\n\n"
        "    def build_for_cudagraph_capture(self, m):\n"
        "        return self.build(0, m)\n\n"
        "    def build(self, common_prefix_len, m):\n"
        "        self.seq_lens.fill_(1)\n"
        "        return self.seq_lens.sum()\n"
    )
    assert only(src).verdict is Verdict.SAFE
    f = only(
        src.replace("return self.build(0, m)", "return super().build_for_cudagraph_capture(m)")
    )
    assert f.verdict is Verdict.UNPROVEN and "super().build_for_cudagraph_capture" in f.message


def test_every_builtin_model_names_its_engine_call_sites() -> None:
    """Which methods run under which configuration is data, with the engine's call site."""
    from zeroopt.analysis.lifecycles import BUILTIN_LIFECYCLES

    for model in BUILTIN_LIFECYCLES:
        for cycle in model.cycles:
            if model.name.startswith(("sglang-attention", "vllm")):
                assert ".py" in cycle.called_at, (model.name, cycle.name)
        if model.graph_init:
            assert ".py:" in model.called_at, model.name
            assert any(c.graphs_only for c in model.cycles)


JUDGED = backend(
    "self.lens = torch.zeros(max_bs)",
    "self.lens.fill_(1)",
    "self.lens.fill_(1)",
    "return q * self.lens.sum()",
    extra="def _helper(self):\n    return None\n",
)


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        # each changes what a modelled method is, or reaches the buffer, from somewhere else
        ("\nclass Fast:\n    pass\n\n\ndef swap(b):\n    b.__class__ = Fast\n", "__class__"),
        ("\nimport builtins\nbuiltins.setattr(Backend, 'forward_' + 'decode', None)\n", "setattr"),
        ("\nB = Backend\nB.forward_decode = None\n", "B.forward_decode"),
        ("\ndef f(b):\n    b.__dict__.update(forward_decode=None)\n", "__dict__"),
        ("\nexec('Backend.forward_decode = None')\n", "exec"),
        ("\nimport operator\nget = operator.attrgetter('lens')\n", "attrgetter"),
        ("\ndef peek(b):\n    return b.lens.sum()\n", "b.lens"),
        ("\ndef peek(b):\n    return b.target.lens.sum()\n", "b.target.lens"),
        ("\ndef warm(b):\n    return b.init_forward_metadata(1, 2)\n", "b.init_forward_metadata"),
        ("\ndef warm(b):\n    return b._helper()\n", "b._helper"),
        ("\ndef patch(b):\n    b.init_forward_metadata = print\n", "named like the modelled"),
    ],
)
def test_code_elsewhere_in_the_module_keeps_the_class_unjudged(change: str, reason: str) -> None:
    assert only(JUDGED).verdict is Verdict.SAFE
    f = only(JUDGED + change)
    assert f.verdict is Verdict.UNPROVEN, f.message
    assert reason in f.message and "(line " in f.message, f.message
