"""`zeroopt verify` scenario: SGLang 0.4.6.post5's FlashAttention backend through its CUDA-graph life.

    zeroopt verify bench/sglang046_cuda_graph.py:scenario --site FILE:1137:30 ... --device cpu|cuda
    python bench/gpu_verify_sglang046.py --device cuda     # every site alone, then together

What the file imports from sglang and sgl_kernel (the kernel adapter too): bench/sglang046_imports.py.

`init_cuda_graph_state` of `sglang/srt/layers/attention/flashattention_backend.py` (0.4.6.post5)
allocates 23 buffers with `torch.zeros`; a rewrite of all 23 to `torch.empty` claimed they are
"filled by copy_ before use". This scenario checks that claim on the released code itself: the
whole file is compiled with its own path and line numbers (the runtime checker poisons an
allocation by its exact position) and its own classes run: `FlashAttentionBackend`,
`FlashAttentionMultiStepBackend`, `FlashAttentionMetadata`, `make_local_attention_virtual_batches`.
The file is not in the repository: bench/pinned_source.py takes it from the pinned wheel
(`pip download --no-deps sglang==0.4.6.post5`, wheel and file sha256 checked).

Only what the file imports from elsewhere is stood in for, as 0.4.6.post5 defines it:
`ForwardMode` and the base class's `forward` dispatch (decode -> forward_decode, else
forward_extend), `AttentionArch`, the EAGLE inputs (plain records), a token KV pool, and the
kernels: `sgl_kernel.flash_attn.flash_attn_with_kvcache` (FlashAttention 3) by an adapter that reads
exactly what that kernel reads with `k=None`: `q` rows `[cu_seqlens_q[b], cu_seqlens_q[b+1])`
(at most `max_seqlen_q` of them), `cache_seqlens[b]`, `page_table[b, :ceil(cache_seqlens[b] /
page_size)]` and those K/V pages; `cu_seqlens_k_new` is not read without new K/V. On CUDA with
flash-attn-4 importable the adapter calls FA4's `flash_attn_varlen_func` (same reads) inside CUDA
graphs; elsewhere a torch reference runs eagerly and raises IndexError where the kernel would read
outside its tensors. `sgl_kernel.merge_state_v2` is its formula in torch.

The lifecycle is 0.4.6.post5's `CudaGraphRunner` (model_executor/cuda_graph_runner.py) and
`EAGLEDraftCudaGraphRunner` (speculative/eagle_draft_cuda_graph_runner.py): static int32
`seq_lens` filled with the backend's fill value (0) and `req_pool_indices` zeros, int64
`out_cache_loc`; `init_cuda_graph_state(max_bs)` once; per batch size, largest first:
`init_forward_metadata_capture_cuda_graph`, two warm-up forwards that execute, the captured
forward; replay: real rows copied in, padded rows `seq_lens = 1` and `out_cache_loc = 0` when the
batch is smaller than the graph, `init_forward_metadata_replay_cuda_graph`, the graph; eager steps
in between go through `init_forward_metadata`; one re-capture of every graph. The draft runner's
forward is `EAGLEWorker.draft_forward` (per step i < steps-1: out_cache_loc columns
[topk*i, topk*(i+1)), positions += 1, the step's backend).

Configurations (each its own backend and runner, all in one trial):
- `decode`: plain decode, page size 16 (4 decode buffers + 3 encoder buffers allocated);
- `local`: decode with chunked local attention (Llama 4 iRoPE), chunk 32, page size 1 (at 16 the
  file's eager path fails with zeros too: its local block table holds token slots, not pages);
- `encdec`: an encoder-decoder (cross-attention layer + self-attention layer), page size 1;
- `eagle1`: EAGLE topk 1, 3 draft tokens: target-verify graphs + 3-step draft-decode graphs, page 16;
- `eagle2`: EAGLE topk 2, 4 draft tokens: target-verify + draft-decode graphs with cascade
  attention (the topk > 1 buffers), page size 1 (SGLang requires 1 for topk > 1).
"""

from __future__ import annotations

import hashlib
import math
import os
import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

if str(Path(__file__).resolve().parent) not in sys.path:  # loaded by path as a scenario
    sys.path.insert(0, str(Path(__file__).resolve().parent))
import pinned_source
import sglang046_imports as imports
from sglang046_imports import (
    AttentionArch,
    AttentionBackend,
    EagleDraftInput,
    EagleVerifyInput,
    ForwardMode,
)

PIN = pinned_source.SGLANG_0_4_6_POST5_FLASHATTENTION
INIT_CUDA_GRAPH_STATE_LINES = (1126, 1332)
CONFIGS_ENV = "ZEROOPT_SGLANG046_CONFIGS"  # comma-separated subset of CONFIGS, for experiments


def released_file() -> Path:
    return pinned_source.pinned_file(PIN)


# -- the released file -----------------------------------------------------------------------------
_REAL: types.ModuleType | None = None


@contextmanager
def _stub_imports() -> Iterator[None]:
    """sys.modules entries for what the file imports from sglang and sgl_kernel, during exec."""
    names: dict[str, dict[str, Any]] = {
        "sglang": {},
        "sglang.srt": {},
        "sglang.srt.configs": {},
        "sglang.srt.configs.model_config": {"AttentionArch": AttentionArch},
        "sglang.srt.layers": {},
        "sglang.srt.layers.attention": {},
        "sglang.srt.layers.attention.base_attn_backend": {"AttentionBackend": AttentionBackend},
        "sglang.srt.managers": {},
        "sglang.srt.managers.schedule_batch": {"global_server_args_dict": {}},
        "sglang.srt.model_executor": {},
        "sglang.srt.model_executor.forward_batch_info": {
            "ForwardBatch": ForwardBatch,
            "ForwardMode": ForwardMode,
        },
        "sglang.srt.speculative": {},
        "sglang.srt.speculative.eagle_utils": {
            "EagleDraftInput": EagleDraftInput,
            "EagleVerifyInput": EagleVerifyInput,
        },
        "sgl_kernel": {"merge_state_v2": imports.merge_state_v2},
        "sgl_kernel.flash_attn": {
            "flash_attn_varlen_func": imports.flash_attn_varlen_func,
            "flash_attn_with_kvcache": imports.flash_attn_with_kvcache,
        },
    }
    saved = {name: sys.modules.get(name) for name in names}
    try:
        for name, attrs in names.items():
            module = types.ModuleType(name)
            module.__dict__.update(attrs)
            module.__path__ = []
            sys.modules[name] = module
        yield
    finally:
        for name, old in saved.items():
            if old is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = old


def load_real_module(path: Path | None = None) -> types.ModuleType:
    """The whole released file, compiled with its own path (positions as `zeroopt scan` gives)."""
    global _REAL
    if _REAL is not None and path is None:
        return _REAL
    source = path or released_file()
    data = source.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != PIN.sha256:
        raise RuntimeError(f"{source}: sha256 {digest}, expected the released {PIN.sha256}")
    filename = os.path.realpath(source)  # what co_filename must be for the interceptor to match
    code = compile(data, filename, "exec", dont_inherit=True)
    module = types.ModuleType("zeroopt_released_sglang046_flashattention_backend")
    module.__file__ = filename
    sys.modules[module.__name__] = module  # dataclasses looks the module up
    with _stub_imports():
        exec(code, module.__dict__)
    if path is None:
        _REAL = module
    return module


def zeros_sites(path: Path | None = None) -> list[tuple[int, int, str]]:
    """(line, 1-based col, dict key) of each `torch.zeros` in init_cuda_graph_state."""
    import ast

    tree = ast.parse((path or released_file()).read_bytes())
    first, last = INIT_CUDA_GRAPH_STATE_LINES
    sites = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                if (
                    isinstance(value, ast.Call)
                    and ast.unparse(value.func) == "torch.zeros"
                    and first <= value.lineno <= last
                    and isinstance(key, ast.Constant)
                ):
                    sites.append((value.lineno, value.col_offset + 1, str(key.value)))
    return sorted(sites)


# -- stand-ins for the model runner, the pools, the layers -----------------------------------------
@dataclass
class ForwardBatch:
    """The ForwardBatch fields the file reads."""

    forward_mode: ForwardMode
    batch_size: int
    req_pool_indices: torch.Tensor
    seq_lens: torch.Tensor
    out_cache_loc: torch.Tensor
    positions: torch.Tensor
    req_to_token_pool: Any
    token_to_kv_pool: Any
    seq_lens_cpu: torch.Tensor | None = None
    seq_lens_sum: int = 0
    encoder_lens: torch.Tensor | None = None
    encoder_out_cache_loc: torch.Tensor | None = None
    spec_info: Any = None
    extend_prefix_lens_cpu: list[int] = field(default_factory=list)
    extend_seq_lens: torch.Tensor | None = None
    extend_seq_lens_cpu: list[int] = field(default_factory=list)
    attn_backend: Any = None


class TokenKVPool:
    """MHATokenToKVPool reduced to set/get: one K and one V buffer per layer, a slot per token."""

    def __init__(self, k: list[torch.Tensor], v: list[torch.Tensor]) -> None:
        self.k, self.v = k, v

    def set_kv_buffer(
        self, layer: Any, loc: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *scales: Any
    ) -> None:
        self.k[layer.layer_id][loc] = k.to(self.k[layer.layer_id].dtype)
        self.v[layer.layer_id][loc] = v.to(self.v[layer.layer_id].dtype)

    def get_kv_buffer(self, layer_id: int) -> tuple[torch.Tensor, torch.Tensor]:
        return self.k[layer_id], self.v[layer_id]


@dataclass
class Layer:
    """The RadixAttention attributes the file reads."""

    layer_id: int
    tp_q_head_num: int
    tp_k_head_num: int
    head_dim: int
    scaling: float
    is_cross_attention: bool = False
    use_irope: bool = False
    logit_cap: float = 0.0
    sliding_window_size: int | None = None
    k_scale: Any = None
    v_scale: Any = None

    @property
    def tp_v_head_num(self) -> int:
        return self.tp_k_head_num

    @property
    def v_head_dim(self) -> int:
        return self.head_dim


@dataclass(frozen=True)
class Config:
    name: str
    page_size: int
    topk: int = 0  # EAGLE topk (0: no speculative decoding)
    num_steps: int = 0  # EAGLE draft steps
    num_draft_tokens: int | None = None
    chunk: int | None = None  # local attention chunk size
    encoder_len: int = 0  # encoder-decoder: encoder tokens per request


CONFIGS: dict[str, Config] = {
    c.name: c
    for c in (
        Config("decode", page_size=16),
        # Page size 1: at 16, init_forward_metadata builds the local block table from token slots
        # before it converts the page table to pages, and reads outside the cache with zeros too.
        Config("local", page_size=1, chunk=32),
        Config("encdec", page_size=1, encoder_len=6),
        Config("eagle1", page_size=16, topk=1, num_steps=3, num_draft_tokens=3),
        Config("eagle2", page_size=1, topk=2, num_steps=3, num_draft_tokens=4),
    )
}
CAPTURE_BS = (1, 2, 4)  # captured largest first, as SGLang does
CONTEXT_LEN = 96
# Request pool indices stay below max(CAPTURE_BS): a re-capture gathers page-table rows of the
# graph state (max_bs rows) at the indices the last replay left in the static buffer, which with a
# larger pool index fails in 0.4.6.post5 whatever the buffers hold.
NUM_REQS = 4


class Model:
    """One (or, for encoder-decoder, a cross- and a self-) attention layer over embeddings."""

    def __init__(
        self, cfg: Config, heads: int, kv_heads: int, dim: int, dtype: torch.dtype, dev: Any
    ) -> None:
        gen = torch.Generator().manual_seed(1234)
        self.hidden = 2 * dim
        scaling = 1.0 / math.sqrt(dim)
        self.layers = [Layer(0, heads, kv_heads, dim, scaling, use_irope=cfg.chunk is not None)]
        if cfg.encoder_len:
            self.layers.insert(0, Layer(1, heads, kv_heads, dim, scaling, is_cross_attention=True))

        def weight(n_in: int, n_out: int) -> torch.Tensor:
            return (torch.randn(n_in, n_out, generator=gen) / math.sqrt(n_in)).to(dev, dtype)

        self.w = {
            layer.layer_id: (
                weight(self.hidden, heads * dim),
                weight(self.hidden, kv_heads * dim),
                weight(self.hidden, kv_heads * dim),
                weight(heads * dim, self.hidden),
            )
            for layer in self.layers
        }
        self.heads, self.kv_heads, self.dim = heads, kv_heads, dim

    def forward(self, embeds: torch.Tensor, batch: ForwardBatch, backend: Any) -> torch.Tensor:
        h = embeds
        for layer in self.layers:
            wq, wk, wv, wo = self.w[layer.layer_id]
            q = (h @ wq).view(-1, self.heads, self.dim)
            if layer.is_cross_attention:  # encoder K/V are already in the cache
                k = v = None
            else:
                k = (h @ wk).view(-1, self.kv_heads, self.dim)
                v = (h @ wv).view(-1, self.kv_heads, self.dim)
            o = backend.forward(q, k, v, layer, batch)
            h = h + o.reshape(h.shape[0], -1).to(h.dtype) @ wo
        return h


@dataclass
class Engine:
    """The pools, the model and the backends of one configuration."""

    cfg: Config
    model: Model
    req_to_token: torch.Tensor  # int32 (NUM_REQS, CONTEXT_LEN + slack), token slots
    pool: TokenKVPool
    target: Any  # FlashAttentionBackend
    draft: Any  # FlashAttentionMultiStepBackend or None
    device: torch.device
    use_graphs: bool
    seq_lens: dict[int, int] = field(default_factory=dict)  # request -> tokens in the cache

    @property
    def req_to_token_pool(self) -> Any:
        return types.SimpleNamespace(req_to_token=self.req_to_token)


def _model_runner(cfg: Config, req_to_token: torch.Tensor, dev: torch.device) -> Any:
    ns = types.SimpleNamespace
    runner = ns(
        sliding_window_size=None,
        model_config=ns(
            is_encoder_decoder=bool(cfg.encoder_len),
            context_len=CONTEXT_LEN,
            attention_arch=AttentionArch.MHA,
        ),
        device=dev,
        req_to_token_pool=ns(req_to_token=req_to_token),
        kv_cache_dtype=torch.bfloat16 if dev.type == "cuda" else torch.float32,
        server_args=ns(
            kv_cache_dtype="auto",
            speculative_eagle_topk=cfg.topk or None,
            speculative_num_draft_tokens=cfg.num_draft_tokens,
        ),
        page_size=cfg.page_size,
    )
    if cfg.chunk is not None:
        runner.attention_chunk_size = cfg.chunk
    return runner


def build_engine(cfg: Config, device: torch.device, use_fa4: bool) -> Engine:
    real = load_real_module()
    on_cuda = device.type == "cuda"
    dim = 128 if use_fa4 else 16
    heads, kv_heads = 4, 2
    dtype = torch.bfloat16 if on_cuda else torch.float32
    gen = torch.Generator().manual_seed(42)
    page = cfg.page_size
    width = CONTEXT_LEN + 2 * page  # room for draft tokens past a request's length
    pages_per_req = width // page
    num_pages = 1 + NUM_REQS * pages_per_req  # page 0: the padding / capture sink
    req_to_token = torch.zeros(NUM_REQS, width, dtype=torch.int32)
    order = torch.randperm(num_pages - 1, generator=gen) + 1
    for r in range(NUM_REQS):
        pages = order[r * pages_per_req : (r + 1) * pages_per_req].tolist()
        req_to_token[r] = torch.tensor([p * page + i for p in pages for i in range(page)])
    req_to_token = req_to_token.to(device)
    model = Model(cfg, heads, kv_heads, dim, dtype, device)
    slots = num_pages * page
    k = [torch.randn(slots, kv_heads, dim, generator=gen).to(device, dtype) for _ in range(2)]
    v = [torch.randn(slots, kv_heads, dim, generator=gen).to(device, dtype) for _ in range(2)]
    runner = _model_runner(cfg, req_to_token, device)
    target = real.FlashAttentionBackend(runner, topk=cfg.topk, speculative_num_steps=cfg.num_steps)
    draft = None
    if cfg.topk:
        draft = real.FlashAttentionMultiStepBackend(runner, cfg.topk, cfg.num_steps)
    return Engine(
        cfg,
        model,
        req_to_token,
        TokenKVPool(k, v),
        target,
        draft,
        device,
        use_graphs=on_cuda and use_fa4,
    )


def _embeds(n: int, hidden: int, seed: int, like: torch.Tensor) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(n, hidden, generator=gen).to(like.device, like.dtype)


def _tree_mask(seq_lens: list[int], n: int, seed: int, device: torch.device) -> torch.Tensor:
    """EAGLE's custom mask: per request n rows of (seq_len + n), prefix visible, draft tokens a
    random tree (each token sees itself and an ancestor chain)."""
    gen = torch.Generator().manual_seed(seed)
    rows = []
    for length in seq_lens:
        parents = [-1] + [int(torch.randint(0, i, (1,), generator=gen)) for i in range(1, n)]
        for i in range(n):
            row = torch.zeros(length + n, dtype=torch.bool)
            row[:length] = True
            j = i
            while j >= 0:
                row[length + j] = True
                j = parents[j]
            rows.append(row)
    return torch.cat(rows).to(device)


# -- SGLang's graph runners -------------------------------------------------------------------------
class GraphRunner:
    """CudaGraphRunner (decode / target verify) or EAGLEDraftCudaGraphRunner (draft decode)."""

    def __init__(self, eng: Engine, mode: str) -> None:
        self.eng, self.mode = eng, mode  # "decode" | "verify" | "draft"
        cfg, dev = eng.cfg, eng.device
        self.max_bs = max(CAPTURE_BS)
        if mode == "decode":
            self.tokens_per_bs = 1
        elif mode == "verify":
            self.tokens_per_bs = cfg.num_draft_tokens or 1
        else:
            self.tokens_per_bs = cfg.topk
        self.backend = eng.draft if mode == "draft" else eng.target
        per_bs_locs = self.tokens_per_bs * (cfg.num_steps if mode == "draft" else 1)
        fill = eng.target.get_cuda_graph_seq_len_fill_value()
        self.req_pool_indices = torch.zeros(self.max_bs, dtype=torch.int32, device=dev)
        self.seq_lens = torch.full((self.max_bs,), fill, dtype=torch.int32, device=dev)
        self.seq_lens_cpu = torch.full((self.max_bs,), fill, dtype=torch.int32)
        self.out_cache_loc = torch.zeros(self.max_bs * per_bs_locs, dtype=torch.int64, device=dev)
        self.positions = torch.zeros(
            self.max_bs * self.tokens_per_bs, dtype=torch.int64, device=dev
        )
        self.embeds = torch.zeros(
            self.max_bs * self.tokens_per_bs, eng.model.hidden, device=dev
        ).to(eng.model.w[0][0].dtype)
        self.encoder_lens = (
            torch.zeros(self.max_bs, dtype=torch.int32, device=dev) if cfg.encoder_len else None
        )
        self.graphs: dict[int, Any] = {}
        self.outputs: dict[int, Any] = {}
        self.batches: dict[int, ForwardBatch] = {}
        self.pool: Any = None

    def _forward(self, batch: ForwardBatch, n_tokens: int) -> Any:
        model = self.eng.model
        embeds = self.embeds[:n_tokens]
        if self.mode != "draft":
            return model.forward(embeds, batch, self.backend)
        # EAGLEWorker.draft_forward: steps 0 .. num_steps-2 run the model, each on its backend.
        cfg = self.eng.cfg
        saved_loc = batch.out_cache_loc
        locs = saved_loc.view(batch.batch_size, -1)
        hidden, outs = embeds, []
        for i in range(cfg.num_steps - 1):
            batch.out_cache_loc = locs[:, cfg.topk * i : cfg.topk * (i + 1)].flatten()
            batch.positions.add_(1)
            hidden = model.forward(hidden, batch, self.backend.attn_backends[i])
            outs.append(hidden)
        batch.out_cache_loc = saved_loc
        return torch.stack(outs)

    def _spec_info(self, n_tokens: int) -> Any:
        cfg = self.eng.cfg
        if self.mode == "verify":
            return EagleVerifyInput(
                custom_mask=torch.zeros(
                    n_tokens * CONTEXT_LEN, dtype=torch.bool, device=self.eng.device
                ),
                positions=None,
                draft_token_num=cfg.num_draft_tokens or 0,
            )
        if self.mode == "draft":
            return EagleDraftInput()
        return None

    def capture(self) -> None:
        """capture(): every batch size, largest first, into one memory pool."""
        self.graphs.clear()
        self.outputs.clear()
        if self.eng.use_graphs:
            self.pool = torch.cuda.graph_pool_handle()
        for bs in sorted(CAPTURE_BS, reverse=True):
            self._capture_one(bs)

    def _capture_one(self, bs: int) -> None:
        eng, cfg = self.eng, self.eng.cfg
        n_tokens = bs * self.tokens_per_bs
        per_bs_locs = self.out_cache_loc.numel() // self.max_bs
        mode = {"decode": ForwardMode.DECODE, "draft": ForwardMode.DECODE}.get(
            self.mode, ForwardMode.TARGET_VERIFY
        )
        batch = ForwardBatch(
            forward_mode=mode,
            batch_size=bs,
            req_pool_indices=self.req_pool_indices[:bs],
            seq_lens=self.seq_lens[:bs],
            out_cache_loc=self.out_cache_loc[: bs * per_bs_locs],
            positions=self.positions[:n_tokens],
            req_to_token_pool=eng.req_to_token_pool,
            token_to_kv_pool=eng.pool,
            encoder_lens=self.encoder_lens[:bs] if self.encoder_lens is not None else None,
            encoder_out_cache_loc=None,
            spec_info=self._spec_info(n_tokens),
        )
        self.batches[bs] = batch
        if self.mode == "draft":
            self.backend.init_forward_metadata_capture_cuda_graph(batch)
        else:
            self.backend.init_forward_metadata_capture_cuda_graph(
                bs,
                n_tokens,
                batch.req_pool_indices,
                batch.seq_lens,
                batch.encoder_lens,
                batch.forward_mode,
                batch.spec_info,
            )
        positions = self.positions.clone()
        for _ in range(2):  # two warm-ups, executed
            self._forward(batch, n_tokens)
        if eng.use_graphs:
            torch.cuda.synchronize()
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph, pool=self.pool):
                self.outputs[bs] = self._forward(batch, n_tokens)
            torch.cuda.synchronize()
            self.graphs[bs] = graph
        self.positions.copy_(positions)  # the draft forward advances positions in place
        del cfg

    def replay(self, reqs: list[int], seed: int, draft_locs: torch.Tensor | None = None) -> Any:
        """replay_prepare + replay for a batch of requests (their cached lengths in eng.seq_lens)."""
        eng, cfg = self.eng, self.eng.cfg
        dev = eng.device
        raw_bs = len(reqs)
        bs = min(b for b in CAPTURE_BS if b >= raw_bs)
        raw_tokens = raw_bs * self.tokens_per_bs
        per_bs_locs = self.out_cache_loc.numel() // self.max_bs
        lens = [eng.seq_lens[r] for r in reqs]
        locs = self._new_locs(reqs, lens) if draft_locs is None else draft_locs
        if bs != raw_bs:
            self.seq_lens.fill_(1)
            self.out_cache_loc.zero_()
            if self.mode == "draft":
                self.positions.zero_()
        self.req_pool_indices[:raw_bs].copy_(torch.tensor(reqs, dtype=torch.int32))
        self.seq_lens[:raw_bs].copy_(torch.tensor(lens, dtype=torch.int32))
        self.out_cache_loc[: raw_bs * per_bs_locs].copy_(locs)
        self.positions[:raw_tokens].copy_(
            torch.tensor([x for n in lens for x in [n] * self.tokens_per_bs])
        )
        self.embeds[:raw_tokens].copy_(_embeds(raw_tokens, eng.model.hidden, seed, self.embeds))
        if bs != raw_bs:
            self.seq_lens_cpu.fill_(1)
        self.seq_lens_cpu[:raw_bs].copy_(torch.tensor(lens, dtype=torch.int32))
        if self.encoder_lens is not None:
            self.encoder_lens[:raw_bs].fill_(cfg.encoder_len)
        if self.mode == "draft":
            # EAGLEDraftCudaGraphRunner.replay: the raw batch, its fields pointed at the padded
            # buffers; out_cache_loc stays the raw batch's.
            batch = ForwardBatch(
                forward_mode=ForwardMode.DECODE,
                batch_size=bs,
                req_pool_indices=self.req_pool_indices[:bs],
                seq_lens=self.seq_lens[:bs],
                out_cache_loc=locs,
                positions=self.positions[: bs * self.tokens_per_bs],
                req_to_token_pool=eng.req_to_token_pool,
                token_to_kv_pool=eng.pool,
                seq_lens_cpu=self.seq_lens_cpu[:bs],
                seq_lens_sum=sum(lens) + (bs - raw_bs),
                spec_info=EagleDraftInput(),
            )
            self.backend.init_forward_metadata_replay_cuda_graph(batch, bs)
        else:
            spec_info = None
            if self.mode == "verify":
                n = cfg.num_draft_tokens or 0
                spec_info = EagleVerifyInput(
                    custom_mask=_tree_mask(lens, n, seed, dev),
                    positions=self.positions[:raw_tokens].clone(),
                    draft_token_num=n,
                )
            mode = ForwardMode.DECODE if self.mode == "decode" else ForwardMode.TARGET_VERIFY
            self.backend.init_forward_metadata_replay_cuda_graph(
                bs,
                self.req_pool_indices,
                self.seq_lens,
                sum(lens) + (bs - raw_bs),
                self.encoder_lens,
                mode,
                spec_info,
                seq_lens_cpu=self.seq_lens_cpu,
            )
        if eng.use_graphs:
            self.graphs[bs].replay()
            out = self.outputs[bs]
        else:
            batch = self.batches[bs]
            saved = self.positions.clone()
            out = self._forward(batch, bs * self.tokens_per_bs)
            self.positions.copy_(saved)
        out = out[:, :raw_tokens] if self.mode == "draft" else out[:raw_tokens]
        self._advance(reqs)
        return out.float().clone()

    def _new_locs(self, reqs: list[int], lens: list[int]) -> torch.Tensor:
        """KV slots of the tokens this batch writes: the next tokens of each request's row."""
        n = self.tokens_per_bs
        rows = [
            self.eng.req_to_token[r, length : length + n]
            for r, length in zip(reqs, lens, strict=True)
        ]
        return torch.cat(rows).to(torch.int64)

    def _advance(self, reqs: list[int]) -> None:
        if self.mode == "decode":
            for r in reqs:
                self.eng.seq_lens[r] += 1


def draft_locs(eng: Engine, reqs: list[int]) -> torch.Tensor:
    """out_cache_loc of a draft batch: bs * topk * num_steps slots, free ones past each request."""
    cfg = eng.cfg
    per = cfg.topk * cfg.num_steps
    rows = []
    for r in reqs:
        length = eng.seq_lens[r]
        rows.append(eng.req_to_token[r, length : length + per])
    return torch.cat(rows).to(torch.int64)


def eager_step(eng: Engine, mode: str, reqs: list[int], seed: int) -> torch.Tensor:
    """A batch run without graphs: init_forward_metadata, then the forward (decode or verify)."""
    cfg, dev = eng.cfg, eng.device
    lens = [eng.seq_lens[r] for r in reqs]
    per = 1 if mode == "decode" else (cfg.num_draft_tokens or 1)
    n_tokens = len(reqs) * per
    locs = torch.cat(
        [eng.req_to_token[r, n : n + per] for r, n in zip(reqs, lens, strict=True)]
    ).long()
    spec_info = None
    fmode = ForwardMode.DECODE
    if mode == "verify":
        fmode = ForwardMode.TARGET_VERIFY
        spec_info = EagleVerifyInput(
            custom_mask=_tree_mask(lens, per, seed, dev),
            positions=torch.zeros(n_tokens, dtype=torch.int64, device=dev),
            draft_token_num=per,
        )
    batch = ForwardBatch(
        forward_mode=fmode,
        batch_size=len(reqs),
        req_pool_indices=torch.tensor(reqs, dtype=torch.int32, device=dev),
        seq_lens=torch.tensor(lens, dtype=torch.int32, device=dev),
        out_cache_loc=locs.to(dev),
        positions=torch.tensor([n for n in lens for _ in range(per)], device=dev),
        req_to_token_pool=eng.req_to_token_pool,
        token_to_kv_pool=eng.pool,
        seq_lens_cpu=torch.tensor(lens, dtype=torch.int32),
        seq_lens_sum=sum(lens),
        encoder_lens=(
            torch.tensor([cfg.encoder_len], dtype=torch.int32, device=dev)
            if cfg.encoder_len and len(reqs) == 1
            else None
        ),
        spec_info=spec_info,
    )
    eng.target.init_forward_metadata(batch)
    like = eng.model.w[0][0]
    out = eng.model.forward(_embeds(n_tokens, eng.model.hidden, seed, like), batch, eng.target)
    if mode == "decode":
        for r in reqs:
            eng.seq_lens[r] += 1
    return out.float().clone()


# Batches: more requests than some graphs, padded ones (3 -> 4), and a bs-1 graph.
STEPS: list[list[int]] = [[0, 1, 2, 3], [1], [3, 0, 2], [2, 1], [1, 3, 0]]
RECAPTURE_BEFORE = 3


def run_config(cfg: Config, device: torch.device, use_fa4: bool) -> dict[str, torch.Tensor]:
    eng = build_engine(cfg, device, use_fa4)
    gen = torch.Generator().manual_seed(7)
    base = max(cfg.encoder_len, 1)
    for r in range(NUM_REQS):  # cached lengths: encoder tokens first, then the prompt
        eng.seq_lens[r] = base + int(torch.randint(5, CONTEXT_LEN - 24, (1,), generator=gen))
    max_bs = max(CAPTURE_BS)
    eng.target.init_cuda_graph_state(max_bs)
    runners = []
    if cfg.topk:
        eng.draft.init_cuda_graph_state(max_bs)
        runners = [GraphRunner(eng, "verify"), GraphRunner(eng, "draft")]
    else:
        runners = [GraphRunner(eng, "decode")]
    for runner in runners:
        runner.capture()
    outputs: dict[str, torch.Tensor] = {}
    for step, reqs in enumerate(STEPS):
        if step == RECAPTURE_BEFORE:
            for runner in runners:
                runner.capture()
        seed = 100 * step
        for runner in runners:
            locs = draft_locs(eng, reqs) if runner.mode == "draft" else None
            key = f"{cfg.name}.{runner.mode}.step{step}.bs{len(reqs)}"
            outputs[key] = runner.replay(reqs, seed + len(outputs), locs)
        if cfg.topk:  # the verified tokens are accepted: one more token per request
            for r in reqs:
                eng.seq_lens[r] += 1
        # An eager step between replays (a batch the graphs do not take, or after a prefill).
        eager_mode = "verify" if cfg.topk else "decode"
        eager_reqs = reqs[:1] if cfg.encoder_len else reqs
        outputs[f"{cfg.name}.eager_{eager_mode}.step{step}"] = eager_step(
            eng, eager_mode, eager_reqs, seed + 50
        )
    return outputs


def uses_flash_attn(device: str | torch.device) -> bool:
    from zeroopt.fixtures.flash_backend import _flash_attn_func

    return torch.device(device).type == "cuda" and _flash_attn_func() is not None


def selected_configs() -> list[Config]:
    names = os.environ.get(CONFIGS_ENV, "")
    if not names:
        return list(CONFIGS.values())
    return [CONFIGS[n] for n in names.split(",") if n]


def scenario(device: str | None = None) -> dict[str, torch.Tensor]:
    """Every configuration's graph replays and eager steps; the outputs of each."""
    from zeroopt.fixtures.flash_backend import _flash_attn_func
    from zeroopt.fixtures.flash_scenario import scenario_device

    dev = torch.device(scenario_device(device))
    use_fa4 = uses_flash_attn(dev)
    imports.FA4 = _flash_attn_func() if use_fa4 else None  # the adapter calls it when set
    outputs: dict[str, torch.Tensor] = {}
    for cfg in selected_configs():
        outputs.update(run_config(cfg, dev, use_fa4))
    return outputs
