"""`zeroopt verify` scenario: SGLang 0.5.23's real full-prefill-CUDA-graph metadata method.

    zeroopt verify bench/sglang_full_cg_prefill.py:scenario --sites SCAN.json --device cpu|cuda

Why it exists: `zeroopt scan` calls one allocation of a released SGLang file `safe` (line 766 of
sglang/srt/layers/attention/flashattention_backend.py, `m.cache_seqlens_int32 = torch.zeros(...)`
in `FlashAttentionBackend._init_full_cg_prefill_metadata`). The runtime checker poisons an
allocation by its exact code position, so this scenario runs the released code itself: the
`FlashAttentionMetadata` dataclass and the method are taken from the released file's AST and
compiled with that file's real path, keeping its line and column numbers. The file is not in the
repository: bench/pinned_source.py takes it from the pinned 0.5.23 wheel (`pip download`,
wheel and file sha256 checked, cached under ~/.cache/zeroopt-bench). Only what the method
touches is stood in for: a backend `self` and a ForwardBatch (their attributes as SGLang sets
them; the unified-pool and sliding-window branches are off and their names raise if reached).

The lifecycle mirrors SGLang 0.5.23's PrefillCudaGraphRunner with the `full` backend
(runner/prefill_cuda_graph_runner.py, runner_backend/full_cuda_graph_backend.py):
- a fixed number of request slots R; token buckets captured largest first into one graph pool;
  a capture batch is the fewest synthetic requests of at most the context length, then
  zero-length sentinel slots; req_pool_indices = arange(R); its tokens write K/V to slot 0;
- capture: `init_forward_metadata_out_graph(batch, in_capture=True)`, which for plain EXTEND is
  `_init_full_cg_prefill_metadata` (the metadata object is created by the first capture only),
  two warm-up forwards that really execute, then the captured forward;
- replay: the static int64 inputs get the real rows [:bs] and zero sentinels [bs:R]; a
  slot-padded view (batch_size R, seq_lens_cpu zero past bs) goes through
  `_init_full_cg_prefill_metadata(view, in_capture=False)` out of graph; the graph replays; the
  output rows [:num_tokens] are kept;
- one re-capture between replays (the existing metadata object is refilled, not recreated).
Attention is forward_extend's plain paged-MHA branch (no local/SWA/cascade/context-parallel,
KV cache written first): `flash_attn_with_kvcache(..., ver=4)`, which SGLang's FA4 wrapper turns
into `flash_attn_varlen_func(q, k_cache, v_cache, cu_seqlens_q=, seqused_k=cache_seqlens,
max_seqlen_q=, page_table=, causal=True, num_splits=0, return_lse=True)`; `cu_seqlens_k` is
passed as `cu_seqlens_k_new`, which the ver=4 dispatch drops. On CUDA with flash-attn-4
importable that is the real kernel inside CUDA graphs; otherwise a torch reference that reads
exactly what the kernel reads runs eagerly over the same buffers (the poisoned memory persists
across calls, which is what matters).
"""

from __future__ import annotations

import ast
import builtins
import hashlib
import math
import os
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

if str(Path(__file__).resolve().parent) not in sys.path:  # loaded by path as a scenario
    sys.path.insert(0, str(Path(__file__).resolve().parent))
import pinned_source

from zeroopt.fixtures.flash_backend import _flash_attn_func
from zeroopt.fixtures.flash_scenario import scenario_device
from zeroopt.fixtures.paged_reference import _int32_ceil_pages

PIN = pinned_source.SGLANG_0_5_23_FLASHATTENTION
RELEASED_SHA256 = PIN.sha256


def released_file() -> Path:
    """The released file, fetched from the pinned wheel and checked (SourceUnavailable if not)."""
    return pinned_source.pinned_file(PIN)


METHOD = "_init_full_cg_prefill_metadata"
METHOD_LINES = (746, 865)
SAFE_LINE = 766  # `m.cache_seqlens_int32 = torch.zeros(...)`: the scan's only `safe` in the file

# SGLang's FA4 split heuristic (`self.num_splits = 0` unless deterministic inference is on).
# FA4 accepts only 1 on SM90 (H100/H200; ../shared/gpu/README.md), so Hopper runs use 1.
NUM_SPLITS = 0
NUM_SPLITS_SM90 = 1
# KV page size; SGLang forces 128 for FA4 on Blackwell, not on Hopper. Overridable for trials.
PAGE_SIZE_ENV = "ZEROOPT_SGLANG_PAGE_SIZE"
DEFAULT_PAGE_SIZE = 16

# Expected runtime verdicts of the method's allocations, by target as `zeroopt scan` writes it:
# the verdicts consistent with the code, and why. Anything but equivalent means "keep zeros".
EXPECTED: dict[str, tuple[tuple[str, ...], str]] = {
    "m.cache_seqlens_int32": (
        ("equivalent",),
        "copy_(seq_lens[:bs]) writes all bs rows on every call before any read (bs is asserted "
        "to be the buffer's length); the scan's `safe`",
    ),
    "m.cu_seqlens_q": (
        ("diverged", "crashed"),
        "only [1:] is written (cumsum); element 0 is the start of request 0's queries",
    ),
    "m.cu_seqlens_k": (
        ("equivalent",),
        "element 0 is never written, but nothing reads the buffer here: forward_extend passes "
        "it as cu_seqlens_k_new, which SGLang's ver=4 dispatch (flash_attention.py) drops; "
        "other paths (MLA, local attention, fa_skip_kv_cache) are not exercised",
    ),
    "m.page_table": (
        ("equivalent",),
        "columns past the batch's max pages keep what they held, but row b is read only up to "
        "ceil(cache_seqlens[b] / page_size) pages, all written by the same call (on a GPU: as "
        "long as FA4 reads no page-table entry past a row's last used page)",
    ),
    "m.swa_page_table": (
        ("not-reached",),
        "allocated only with a sliding-window KV pool, which this scenario does not model",
    ),
    "self.full_cg_prefill_swa_out_cache_loc": (
        ("not-reached",),
        "allocated only with a sliding-window KV pool, which this scenario does not model",
    ),
}


# -- the released code ---------------------------------------------------------------------------
class _NotInThisScenario:
    """A module-level name of the real file that only the disabled branches use."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        raise RuntimeError(f"{self._name}.{attr}: a branch this scenario disables was taken")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"{self._name}(): a branch this scenario disables was taken")


@dataclass(frozen=True)
class RealCode:
    metadata_cls: type
    init_full_cg_prefill_metadata: Callable[..., None]
    filename: str


_REAL: RealCode | None = None


def _free_names(func: ast.FunctionDef) -> set[str]:
    """Names the function's body reads that it does not bind: module globals or builtins.
    (Annotations are left out: `from __future__ import annotations` never evaluates them.)"""
    bound = {a.arg for a in (*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs)}
    loads: set[str] = set()
    for stmt in (*func.body, *func.args.defaults):
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name):
                (loads if isinstance(node.ctx, ast.Load) else bound).add(node.id)
    return loads - bound


def load_real_code(path: Path | None = None) -> RealCode:
    """Compile the released dataclass and method with the released file's own path and positions."""
    global _REAL
    default = path is None
    if _REAL is not None and default:
        return _REAL
    path = path or released_file()
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != RELEASED_SHA256:
        raise RuntimeError(f"{path}: sha256 {digest}, expected the released {RELEASED_SHA256}")
    filename = os.path.realpath(path)  # what co_filename must be for the interceptor to match
    tree = ast.parse(data, filename)
    body: list[ast.stmt] = []
    classes: dict[str, ast.ClassDef] = {}
    for node in tree.body:
        # The file's own imports that the two definitions use (line 1 is `from __future__ import
        # annotations`, so the dataclass's annotations stay strings and name nothing else).
        if isinstance(node, ast.ImportFrom) and node.level == 0:
            if node.module in ("__future__", "dataclasses", "typing"):
                body.append(node)
        elif isinstance(node, ast.Import) and [a.name for a in node.names] == ["torch"]:
            body.append(node)
        elif isinstance(node, ast.ClassDef):
            classes[node.name] = node
    method = next(
        n
        for n in classes["FlashAttentionBackend"].body
        if isinstance(n, ast.FunctionDef) and n.name == METHOD
    )
    if (method.lineno, method.end_lineno) != METHOD_LINES:
        raise RuntimeError(
            f"{METHOD} spans {method.lineno}-{method.end_lineno}, not {METHOD_LINES}"
        )
    # A method without super()/__class__/private names runs the same as a module-level function.
    body += [classes["FlashAttentionMetadata"], method]
    code = compile(ast.Module(body=body, type_ignores=[]), filename, "exec", dont_inherit=True)

    module = types.ModuleType("zeroopt_released_sglang_flashattention_backend")
    module.__file__ = filename
    module.__dict__.update(
        IdSpaceKind=_NotInThisScenario("IdSpaceKind"),
        assert_buffer_fits=_NotInThisScenario("assert_buffer_fits"),
    )
    sys.modules[module.__name__] = module  # dataclasses looks the module up
    exec(code, module.__dict__)
    missing = {
        n for n in _free_names(method) if n not in module.__dict__ and not hasattr(builtins, n)
    }
    if missing:
        raise RuntimeError(f"{METHOD} reads names this scenario does not provide: {missing}")
    real = RealCode(module.FlashAttentionMetadata, getattr(module, METHOD), filename)
    if default:
        _REAL = real
    return real


def method_sites(path: Path | None = None) -> dict[str, tuple[int, int]]:
    """Target as written (`m.page_table`) -> (line, 1-based col) of each `torch.zeros` call the
    method assigns, the way `zeroopt scan` reports them (its `target`, `line` and `col`)."""
    tree = ast.parse((path or released_file()).read_bytes())
    sites: dict[str, tuple[int, int]] = {}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.FunctionDef) and node.name == METHOD):
            continue
        for stmt in ast.walk(node):
            if (
                isinstance(stmt, ast.Assign)
                and len(stmt.targets) == 1
                and isinstance(stmt.value, ast.Call)
                and ast.unparse(stmt.value.func) == "torch.zeros"
            ):
                # The file is ASCII around these calls: byte columns equal char columns.
                target = ast.unparse(stmt.targets[0])
                sites[target] = (stmt.value.lineno, stmt.value.col_offset + 1)
    return sites


# -- stand-ins for what the method touches -----------------------------------------------------
class IdentityKVIndexTranslator:
    """SGLang's translator without a unified memory pool: nothing is translated."""

    is_translating = False

    def copy_page_table(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError("copy_page_table: only a translating (unified) pool calls this")

    def write_ids(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError("write_ids: only the sliding-window pool calls this here")


class BackendStandIn:
    """The attributes of FlashAttentionBackend that `_init_full_cg_prefill_metadata` reads,
    set as its __init__ sets them; the method itself is the released one, bound to this."""

    def __init__(self, req_to_token: torch.Tensor, page_size: int, max_context_len: int) -> None:
        self.req_to_token = req_to_token
        self.page_size = page_size
        self.max_context_len = max_context_len
        self.max_num_pages = (self.max_context_len + self.page_size - 1) // self.page_size
        self.use_sliding_window_kv_pool = False
        self.kv_index_translator = IdentityKVIndexTranslator()
        self.token_to_kv_pool = None  # only the sliding-window branches use it
        self.full_cg_prefill_metadata: Any = None  # __init__ sets it to None (line 357)
        self.forward_metadata: Any = None
        real = load_real_code()
        self._init_full_cg_prefill_metadata = types.MethodType(
            real.init_full_cg_prefill_metadata, self
        )


@dataclass
class ForwardBatchStandIn:
    """The ForwardBatch fields the method reads (any other attribute raises AttributeError)."""

    batch_size: int
    seq_lens: torch.Tensor  # int64, device
    seq_lens_cpu: torch.Tensor  # int64, host
    extend_seq_lens: torch.Tensor  # int64, device
    extend_prefix_lens: torch.Tensor
    req_pool_indices: torch.Tensor  # int64, device
    positions: torch.Tensor  # one per (padded) token; the method reads only numel()
    out_cache_loc: torch.Tensor
    kv_loc_plan: None = None  # read only by the translating branch


# -- attention -------------------------------------------------------------------------------------
def paged_prefill_reference(
    q: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    cu_seqlens_q: torch.Tensor,
    seqused_k: torch.Tensor,
    page_table: torch.Tensor,
    softmax_scale: float,
) -> torch.Tensor:
    """Causal varlen prefill over a paged KV cache, reading what flash_attn_varlen_func reads.

    The prefill counterpart of fixtures/paged_reference.py (decode only): request b's queries
    are rows [cu_seqlens_q[b], cu_seqlens_q[b+1]), causally aligned to the bottom right of its
    seqused_k[b] keys; page_table is read flat, row b up to ceil(seqused_k[b] / page_size)
    entries in int32 arithmetic. A request with no query rows computes nothing; rows no request
    covers are left unwritten (NaN here: the kernel's output is torch.empty); a read outside q or
    the page table or the cache raises IndexError where the kernel would access illegal memory.
    """
    total_q, heads, dim = q.shape
    num_pages, page_size, kv_heads, _ = k_cache.shape
    group = heads // kv_heads
    batch = page_table.shape[0]
    starts = [int(x) for x in cu_seqlens_q.tolist()]
    if len(starts) != batch + 1:
        raise ValueError(f"cu_seqlens_q has {len(starts)} entries for {batch} requests")
    lengths = [int(x) for x in seqused_k.tolist()]
    flat_table = page_table.reshape(-1)
    row_stride = page_table.stride(0)
    out = torch.full((total_q, heads, dim), float("nan"), dtype=torch.float32, device=q.device)
    for b in range(batch):
        start, end = starts[b], starts[b + 1]
        seqlen_q = end - start
        if seqlen_q <= 0:
            continue  # no query tile for this request
        if start < 0 or end > total_q:
            raise IndexError(
                f"emulated illegal memory access: request {b} reads query rows [{start}, {end}) "
                f"of {total_q}"
            )
        length = lengths[b]
        n_pages = _int32_ceil_pages(length, page_size)
        if length <= 0 or n_pages <= 0:
            out[start:end] = 0.0  # no key to attend to: the kernel writes zeros
            continue
        first = b * row_stride
        if first + n_pages > flat_table.numel():
            raise IndexError(
                f"emulated illegal memory access: request {b} reads {n_pages} page-table entries "
                f"(seqused_k={length}) past the end of the page table"
            )
        pages = flat_table[first : first + n_pages].to(torch.int64)
        if int(pages.min()) < 0 or int(pages.max()) >= num_pages:
            raise IndexError(
                f"emulated illegal memory access: request {b} reads page "
                f"{int(pages.min()) if int(pages.min()) < 0 else int(pages.max())} of {num_pages}"
            )
        keys = k_cache[pages].reshape(-1, kv_heads, dim)[:length].float()
        values = v_cache[pages].reshape(-1, kv_heads, dim)[:length].float()
        keys = keys.repeat_interleave(group, dim=1)  # (L, H, D)
        values = values.repeat_interleave(group, dim=1)
        scores = torch.einsum("qhd,khd->hqk", q[start:end].float(), keys) * softmax_scale
        rows = torch.arange(seqlen_q, device=q.device)[:, None]
        cols = torch.arange(length, device=q.device)[None, :]
        visible = cols <= rows + (length - seqlen_q)  # (Q, L), bottom-right causal
        scores = scores.masked_fill(~visible, float("-inf"))
        probs = torch.where(visible.any(dim=1)[:, None], scores.softmax(dim=-1), 0.0)
        out[start:end] = torch.einsum("hqk,khd->qhd", probs, values)
    return out.to(q.dtype)


def forward_extend_attention(
    q: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    metadata: Any,
    scaling: float,
    flash_attn: Callable[..., Any] | None,
) -> torch.Tensor:
    """forward_extend's plain paged-MHA branch under full-CG prefill metadata (lines 1659-1807),
    through SGLang's FA4 `flash_attn_with_kvcache` wrapper (flash_attention_v4.py)."""
    page_table = metadata.page_table
    cu_seqlens_q = metadata.cu_seqlens_q
    cache_seqlens = metadata.cache_seqlens_int32
    max_seqlen_q = metadata.max_seq_len_q
    # metadata.cu_seqlens_k goes in as cu_seqlens_k_new; the FA4 wrapper does not forward it.
    heads, dim = q.shape[-2:]
    q = q.contiguous().view(-1, heads, dim)
    if flash_attn is not None:
        result = flash_attn(
            q=q,
            k=k_cache,
            v=v_cache,
            qv=None,
            cu_seqlens_q=cu_seqlens_q,
            seqused_k=cache_seqlens,
            max_seqlen_q=max_seqlen_q,
            page_table=page_table,
            softmax_scale=scaling,
            causal=True,
            softcap=None,  # layer.logit_cap 0.0 -> None in the wrapper
            window_size=(None, None),  # (-1, -1) -> (None, None) in the wrapper
            num_splits=num_splits(q.device),
            pack_gqa=None,
            return_lse=True,  # the wrapper always asks, then keeps result[0]
        )
        return result[0] if isinstance(result, tuple) else result
    return paged_prefill_reference(
        q, k_cache, v_cache, cu_seqlens_q, cache_seqlens, page_table, scaling
    )


# -- a one-layer model and SGLang's full prefill graph runner ------------------------------------
class TinyPrefillModel:
    """One attention layer: K/V of the new tokens are stored first, then attention reads the
    paged cache (prefix + new tokens) through the backend's current metadata."""

    def __init__(
        self,
        hidden: int,
        num_heads: int,
        num_kv_heads: int,
        head_dim: int,
        dtype: torch.dtype,
        device: torch.device,
    ) -> None:
        gen = torch.Generator().manual_seed(1234)

        def weight(n_in: int, n_out: int) -> torch.Tensor:
            w = torch.randn(n_in, n_out, generator=gen) / math.sqrt(n_in)
            return w.to(device, dtype)

        self.num_heads, self.num_kv_heads, self.head_dim = num_heads, num_kv_heads, head_dim
        self.wq = weight(hidden, num_heads * head_dim)
        self.wk = weight(hidden, num_kv_heads * head_dim)
        self.wv = weight(hidden, num_kv_heads * head_dim)
        self.wo = weight(num_heads * head_dim, hidden)
        self.scaling = 1.0 / math.sqrt(head_dim)

    def forward(
        self,
        embeds: torch.Tensor,
        out_cache_loc: torch.Tensor,
        k_cache: torch.Tensor,
        v_cache: torch.Tensor,
        backend: BackendStandIn,
        flash_attn: Callable[..., Any] | None,
    ) -> torch.Tensor:
        tokens = embeds.shape[0]
        h, kvh, d = self.num_heads, self.num_kv_heads, self.head_dim
        q = (embeds @ self.wq).view(tokens, h, d)
        k = (embeds @ self.wk).view(tokens, kvh, d)
        v = (embeds @ self.wv).view(tokens, kvh, d)
        # set_kv_buffer(layer, KVWriteLoc(out_cache_loc), k, v) before attention
        k_cache.view(-1, kvh, d)[out_cache_loc] = k
        v_cache.view(-1, kvh, d)[out_cache_loc] = v
        out = forward_extend_attention(
            q, k_cache, v_cache, backend.forward_metadata, self.scaling, flash_attn
        )
        return out.reshape(tokens, h * d).to(embeds.dtype) @ self.wo


@dataclass(frozen=True)
class Request:
    req_pool_index: int
    prefix_len: int  # tokens already in the KV cache
    extend_len: int  # new tokens this prefill computes


@dataclass
class FullPrefillGraphRunner:
    """SGLang's PrefillCudaGraphRunner + FullCudaGraphBackend, reduced to what the metadata sees."""

    backend: BackendStandIn
    model: TinyPrefillModel
    k_cache: torch.Tensor
    v_cache: torch.Tensor
    req_slots: int
    buckets: list[int]
    context_len: int
    hidden: int
    flash_attn: Callable[..., Any] | None
    use_graphs: bool
    graphs: dict[int, Any] = field(default_factory=dict)
    outputs: dict[int, torch.Tensor] = field(default_factory=dict)

    def __post_init__(self) -> None:
        device = self.k_cache.device
        r, max_tokens = self.req_slots, max(self.buckets)
        # _prefill_static_buffers: 1-D int64 zeros of the request pool size (sliced [:R]).
        self.static = {
            name: torch.zeros((r,), dtype=torch.int64, device=device)
            for name in ("seq_lens", "extend_seq_lens", "extend_prefix_lens", "req_pool_indices")
        }
        # Buffer-registry slots sliced per bucket, and _full_cg_seq_lens_cpu.
        self.input_embeds = torch.zeros(max_tokens, self.hidden, dtype=self.k_cache.dtype)
        self.input_embeds = self.input_embeds.to(device)
        self.out_cache_loc = torch.zeros(max_tokens, dtype=torch.int64, device=device)
        self.positions = torch.zeros(max_tokens, dtype=torch.int64, device=device)
        self.seq_lens_cpu = torch.zeros((r,), dtype=torch.int64)
        self.pool: Any = None

    def _view(self, num_tokens: int, seq_lens_cpu: torch.Tensor) -> ForwardBatchStandIn:
        r = self.req_slots
        return ForwardBatchStandIn(
            batch_size=r,
            seq_lens=self.static["seq_lens"][:r],
            seq_lens_cpu=seq_lens_cpu,
            extend_seq_lens=self.static["extend_seq_lens"][:r],
            extend_prefix_lens=self.static["extend_prefix_lens"][:r],
            req_pool_indices=self.static["req_pool_indices"][:r],
            positions=self.positions[:num_tokens],
            out_cache_loc=self.out_cache_loc[:num_tokens],
        )

    def _forward(self, num_tokens: int) -> torch.Tensor:
        return self.model.forward(
            self.input_embeds[:num_tokens],
            self.out_cache_loc[:num_tokens],
            self.k_cache,
            self.v_cache,
            self.backend,
            self.flash_attn,
        )

    def capture(self) -> None:
        """capture_one_shape per bucket, largest first (one graph pool for all). Called again it
        is a re-capture (SGLang re-captures after e.g. a weight update), over the metadata
        object and buffers as the replays left them."""
        r = self.req_slots
        self.graphs.clear()
        self.outputs.clear()
        if self.use_graphs:
            self.pool = torch.cuda.graph_pool_handle()
        for num_tokens in sorted(self.buckets, reverse=True):
            # capture_prepare: fewest requests of <= context_len tokens, then zero-length slots.
            lens = [
                min(self.context_len, num_tokens - s)
                for s in range(0, num_tokens, self.context_len)
            ]
            lens += [0] * (r - len(lens))
            assert len(lens) == r, "a capture bucket needs more request slots than R"
            device = self.k_cache.device
            self.static["seq_lens"][:r].copy_(torch.tensor(lens, device=device))
            self.static["extend_seq_lens"][:r].copy_(torch.tensor(lens, device=device))
            self.static["extend_prefix_lens"][:r].zero_()
            self.static["req_pool_indices"][:r].copy_(torch.arange(r, device=device))
            self.out_cache_loc[:num_tokens].zero_()  # the capture batch writes the page-0 sink
            batch = self._view(num_tokens, torch.tensor(lens))
            self.backend._init_full_cg_prefill_metadata(batch, in_capture=True)
            for _ in range(2):  # FullCudaGraphBackend.capture_one: two warm-ups, executed
                self._forward(num_tokens)
            if self.use_graphs:
                torch.cuda.synchronize()
                graph = torch.cuda.CUDAGraph()
                with torch.cuda.graph(graph, pool=self.pool):
                    self.outputs[num_tokens] = self._forward(num_tokens)
                torch.cuda.synchronize()
                self.graphs[num_tokens] = graph
            else:
                self.graphs[num_tokens] = num_tokens  # eager: replay reruns the forward

    def replay(self, requests: list[Request], embeds: torch.Tensor) -> torch.Tensor:
        """load_batch + replay for one prefill batch; its output rows [:num_tokens]."""
        r, bs = self.req_slots, len(requests)
        assert 0 < bs <= r, "more requests than slots falls back to eager in SGLang"
        num_tokens = sum(q.extend_len for q in requests)
        bucket = min(b for b in self.buckets if b >= num_tokens)
        device = self.k_cache.device
        req_to_token = self.backend.req_to_token
        # buffer_registry.fill_from: real rows, then the padded tail reset (slot 0, zeros).
        locs = torch.cat(
            [
                req_to_token[q.req_pool_index, q.prefix_len : q.prefix_len + q.extend_len]
                for q in requests
            ]
        )
        positions = torch.cat(
            [torch.arange(q.prefix_len, q.prefix_len + q.extend_len) for q in requests]
        )
        self.out_cache_loc[:num_tokens].copy_(locs)
        self.out_cache_loc[num_tokens:bucket].zero_()
        self.positions[:num_tokens].copy_(positions.to(device))
        self.positions[num_tokens:bucket].zero_()
        self.input_embeds[:num_tokens].copy_(embeds.to(device, self.input_embeds.dtype))
        self.input_embeds[num_tokens:bucket].zero_()
        # Static prefill inputs: rows [:bs] from the batch, zero-length sentinels [bs:R].
        seq_lens = torch.tensor([q.prefix_len + q.extend_len for q in requests])
        columns = {
            "seq_lens": seq_lens,
            "extend_seq_lens": torch.tensor([q.extend_len for q in requests]),
            "extend_prefix_lens": torch.tensor([q.prefix_len for q in requests]),
            "req_pool_indices": torch.tensor([q.req_pool_index for q in requests]),
        }
        for name, values in columns.items():
            self.static[name][:bs].copy_(values.to(device))
            self.static[name][bs:r].zero_()
        # _prepare_forward_metadata_for_replay: the slot-padded view, out of graph.
        self.seq_lens_cpu.zero_()
        self.seq_lens_cpu[:bs].copy_(seq_lens)
        self.backend._init_full_cg_prefill_metadata(
            self._view(bucket, self.seq_lens_cpu), in_capture=False
        )
        if self.use_graphs:
            self.graphs[bucket].replay()
            out = self.outputs[bucket]
        else:
            out = self._forward(bucket)
        return out[:num_tokens].float().clone()  # graphs of one pool share output memory


# Replay batches after capture: fewer requests than slots, shorter than the capture lengths,
# cached prefixes (some written by earlier replays), and a full-length batch at the end.
REPLAYS: list[list[Request]] = [
    [Request(1, 0, 100), Request(2, 0, 60), Request(3, 0, 40)],  # 200 tokens -> bucket 256
    [Request(4, 0, 30)],  # bs 1, 30 tokens -> bucket 128
    [Request(5, 20, 50), Request(6, 0, 70), Request(1, 100, 10), Request(2, 60, 5)],  # bs = R
    [Request(3, 40, 3)],  # 3 tokens behind a 40-token prefix
    [Request(6, 70, 58), Request(4, 30, 98)],  # both 128 long (the default context), 156 tokens
]


RECAPTURE_BEFORE = 3  # a re-capture between replays 2 and 3


@dataclass
class Setup:
    runner: FullPrefillGraphRunner
    uses_flash_attn: bool
    hidden: int


def num_splits(device: torch.device) -> int:
    return NUM_SPLITS_SM90 if torch.cuda.get_device_capability(device)[0] == 9 else NUM_SPLITS


def uses_flash_attn(device: str | torch.device) -> bool:
    """Whether `build` runs FlashAttention 4 (in CUDA graphs) rather than the torch reference."""
    return torch.device(device).type == "cuda" and _flash_attn_func() is not None


def build(
    device: str | torch.device,
    *,
    req_slots: int = 4,
    buckets: tuple[int, ...] = (128, 256),
    num_requests: int = 6,
    page_size: int | None = None,
    max_context_len: int | None = None,
    hidden: int | None = None,
    num_heads: int = 4,
    num_kv_heads: int = 2,
    head_dim: int | None = None,
    use_flash_attn: bool | None = None,
) -> Setup:
    """A paged KV cache (random contents: cached prefixes) and a captured runner over it.

    Head dim 128 for FlashAttention 4; the CPU reference gets 32 (what is read where does not
    depend on it, and each checker trial then spends its time importing torch, not in attention).
    Page size from $ZEROOPT_SGLANG_PAGE_SIZE, else 16.
    """
    device = torch.device(device)
    on_cuda = device.type == "cuda"
    if use_flash_attn is None:
        use_flash_attn = uses_flash_attn(device)
    head_dim = head_dim or (128 if use_flash_attn else 32)
    hidden = hidden or 2 * head_dim
    page_size = page_size or int(os.environ.get(PAGE_SIZE_ENV, DEFAULT_PAGE_SIZE))
    # At least two pages per request, so that page-table rows have columns to leave stale.
    max_context_len = max_context_len or max(128, 2 * page_size)
    dtype = torch.bfloat16 if on_cuda else torch.float32
    pages_per_req = (max_context_len + page_size - 1) // page_size
    num_pages = 1 + num_requests * pages_per_req  # page 0: the padding / capture sink page
    gen = torch.Generator().manual_seed(42)
    k_cache = torch.randn(num_pages, page_size, num_kv_heads, head_dim, generator=gen)
    v_cache = torch.randn(num_pages, page_size, num_kv_heads, head_dim, generator=gen)
    # req_to_token: row 0 is the padding request (all slot 0), as in SGLang's zero-initialised
    # pool; real requests own whole pages, in a scrambled order.
    req_to_token = torch.zeros(num_requests + 1, pages_per_req * page_size, dtype=torch.int64)
    order = torch.randperm(num_pages - 1, generator=gen) + 1
    for r in range(1, num_requests + 1):
        pages = order[(r - 1) * pages_per_req : r * pages_per_req].tolist()
        req_to_token[r] = torch.tensor([p * page_size + i for p in pages for i in range(page_size)])
    backend = BackendStandIn(req_to_token.to(device), page_size, max_context_len)
    model = TinyPrefillModel(hidden, num_heads, num_kv_heads, head_dim, dtype, device)
    flash_attn = _flash_attn_func() if use_flash_attn else None
    runner = FullPrefillGraphRunner(
        backend=backend,
        model=model,
        k_cache=k_cache.to(device, dtype),
        v_cache=v_cache.to(device, dtype),
        req_slots=req_slots,
        buckets=list(buckets),
        context_len=max_context_len,
        hidden=hidden,
        flash_attn=flash_attn,
        use_graphs=on_cuda and flash_attn is not None,
    )
    runner.capture()
    return Setup(runner, flash_attn is not None, hidden)


def scenario(device: str | None = None) -> dict[str, torch.Tensor]:
    """Capture buckets 256 and 128, then the REPLAYS batches (re-capturing once on the way);
    the attention layer's outputs of each replay."""
    setup = build(scenario_device(device))
    outputs: dict[str, torch.Tensor] = {}
    for step, requests in enumerate(REPLAYS):
        if step == RECAPTURE_BEFORE:
            setup.runner.capture()
        tokens = sum(q.extend_len for q in requests)
        gen = torch.Generator().manual_seed(1000 + step)
        embeds = torch.randn(tokens, setup.hidden, generator=gen)
        outputs[f"replay{step}_bs{len(requests)}_tokens{tokens}"] = setup.runner.replay(
            requests, embeds
        )
    return outputs
