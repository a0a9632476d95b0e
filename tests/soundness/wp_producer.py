"""The `producer` shape (`--wp-shapes producer`): a public module-level function allocates a zeros
buffer (a literal size, `n + 1`, `inp.shape[0] + 1`, `zeros_like`, `new_zeros`, or an empty one),
writes part of it and returns it to callers, the buffers analysis/returned_uncovered.py calls
`unsafe` when an element no write covers is handed back.

The producer's writes: literal slices along either dimension (`x[1:]`, `x[:, :4]`, negative ones,
steps), `out=` of a slice, writes through an alias or a view (`narrow`, `select`, `view(-1)`,
`x[None]`, `unflatten`, `unsqueeze`, `as_strided`, `.T`, `copy_` into a slice), an index that is
a name or a tensor, a write under `if` (one arm or both), loops that may not run, full writes
(`fill_`, `zero_`, `out=` of all of it), in-place ops that write nothing new (`add_`,
`clamp_`), a helper of `lib` handed the buffer, a nested def, a lambda, a comprehension,
`try`/`finally`. It returns the buffer itself, `.view(-1)`, `.unsqueeze(0)`, one slot of a
tuple, list or dict display; on some paths it returns early before any write, returns another
tensor, or binds the name to another tensor before the return. It is called only through a
computed name (`globals()["pro" + "ducer1"]`, f reads what it gets), or by a caller of the tree
that reads all of it, a slice of it (often just the part a write covered), writes some first,
or hands it to a callable parameter (a lambda or a def of f's module that reads it); that caller
may get it through a private function that returns it again (`up`).

Each statement comes with the cells (row, column) it writes or reads for given `n`, `k`, `flag`:
poisoning the allocation changes the result exactly when, for some input of the bench
(gen_model.INPUTS), the read takes a cell no write reached (`add_`/`clamp_` keep a poisoned
cell poisoned for some pattern).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from tests.soundness.gen_model import INPUTS
from tests.soundness.wp_blocks import ALLOC_IN_CLASS, Blocks, Buf, Piece, ind

Cells = set[tuple[int, int]]
# (rows, columns, n, k, flag) -> the cells a statement writes or reads
Where = Callable[[int, int, int, int, bool], Cells]


def _grid(rows: list[int], cols: list[int]) -> Cells:
    return {(r, c) for r in rows for c in cols}


def rows(s: slice) -> Where:
    return lambda r, c, n, k, f: _grid(list(range(r))[s], list(range(c)))


def cols(s: slice) -> Where:
    return lambda r, c, n, k, f: _grid(list(range(r)), list(range(c))[s])


def flat(s: slice) -> Where:
    return lambda r, c, n, k, f: {divmod(i, c) for i in range(r * c)[s]}


ALL = rows(slice(None))
NOTHING: Where = lambda r, c, n, k, f: set()  # noqa: E731


@dataclass(frozen=True)
class Size:
    text: str  # the allocation, `{kw}` standing for the dtype keyword
    dims: str  # the shape as the callers can spell it (with `inp`, `n`)
    rows: Callable[[int], int]  # of n
    cols: int  # 1 for a 1-D buffer

    def two(self) -> bool:
        return self.cols > 1


SIZES = {
    "lit1": Size("torch.zeros(8{kw})", "8", lambda n: 8, 1),
    "lit2": Size("torch.zeros(4, 8{kw})", "4, 8", lambda n: 4, 8),
    "lit2-tuple": Size("torch.zeros((4, 8){kw})", "4, 8", lambda n: 4, 8),
    "sym1": Size("torch.zeros(n + 1{kw})", "n + 1", lambda n: n + 1, 1),
    "sym2": Size("torch.zeros(n + 1, 8{kw})", "n + 1, 8", lambda n: n + 1, 8),
    "shape1": Size("torch.zeros(inp.shape[0] + 1{kw})", "inp.shape[0] + 1", lambda n: 5, 1),
    "like2": Size("torch.zeros_like(inp{kw})", "4, 8", lambda n: 4, 8),
    "new1": Size("inp.new_zeros(n + 1{kw})", "n + 1", lambda n: n + 1, 1),
    "empty1": Size("torch.zeros(n - n{kw})", "0", lambda n: 0, 1),
    "empty2": Size("torch.zeros(0, 8{kw})", "0, 8", lambda n: 0, 8),
}
_SIZE_DRAW = ("lit1", "lit2", "lit2-tuple", "sym1", "sym1", "sym2", "sym2", "shape1", "like2",
              "new1", "empty1", "empty2")  # fmt: skip


@dataclass(frozen=True)
class Write:
    text: str  # `{T}` the buffer, `{C}`/`{D}` constants, `{u}` the piece's number, `{H}` a helper
    cells: Where
    ok: Callable[[int, int], bool] = lambda r, n: True  # valid for (rows, n)
    dims: int = 0  # 0: any buffer; 2: a 2-D buffer only
    region: str = ""  # a read of what it writes (a key of READS), if a slice shows it
    helper: str = ""  # the body of a helper `{H}(t, on)` of lib that the write calls


def _some(r: int, n: int) -> bool:
    return r >= 1


def _flag(where: Where) -> Where:
    return lambda r, c, n, k, f: where(r, c, n, k, f) if f else set()


WRITES: dict[str, Write] = {
    "tail": Write("{T}[1:] = {C}", rows(slice(1, None)), region="[1:]"),
    "cumsum-out": Write(
        "torch.cumsum(torch.ones_like({T}[1:]), 0, out={T}[1:])",
        rows(slice(1, None)),
        region="[1:]",
    ),
    "head": Write("{T}[0] = {C}", rows(slice(0, 1)), _some, region="[:1]"),
    "head-slice": Write("{T}[:1] = {C}", rows(slice(None, 1)), region="[:1]"),
    "last": Write("{T}[-1] = {C}", rows(slice(-1, None)), _some, region="[-1:]"),
    "but-last": Write("{T}[:-1] = {C}", rows(slice(None, -1)), region="[:-1]"),
    "even": Write("{T}[::2] = {C}", rows(slice(None, None, 2)), region="[::2]"),
    "odd": Write("{T}[1::2] = {C}", rows(slice(1, None, 2)), region="[1::2]"),
    "mid": Write("{T}[1:3] = {C}", rows(slice(1, 3)), region="[1:3]"),
    "alias-tail": Write("v{u} = {T}[1:]\nv{u}.fill_({C})", rows(slice(1, None)), region="[1:]"),
    "alias-head": Write(
        "h{u} = {T}[:1]\nh{u}.fill_({C})\ndel h{u}", rows(slice(None, 1)), region="[:1]"
    ),
    "flat-tail": Write("{T}.view(-1)[1:] = {C}", flat(slice(1, None)), region="flat[1:]"),
    "flat-head": Write("{T}.view(-1)[0] = {C}", flat(slice(0, 1)), _some, region="flat[:1]"),
    "narrow-head": Write("{T}.narrow(0, 0, 1).fill_({C})", rows(slice(0, 1)), _some, region="[:1]"),
    "narrow-tail": Write(
        "{T}.narrow(0, 1, {T}.shape[0] - 1).fill_({C})",
        rows(slice(1, None)),
        _some,
        region="[1:]",
    ),
    "select-head": Write("{T}.select(0, 0).fill_({C})", rows(slice(0, 1)), _some, region="[:1]"),
    "none-head": Write("{T}[None][:, 0] = {C}", rows(slice(0, 1)), _some, region="[:1]"),
    "unflatten-head": Write(
        "{T}.unflatten(0, (1, -1))[0, 0] = {C}", rows(slice(0, 1)), _some, region="[:1]"
    ),
    "unsqueeze-head": Write("{T}.unsqueeze(0)[0, :1] = {C}", rows(slice(None, 1)), region="[:1]"),
    "strided-head": Write(
        "{T}.as_strided((1,), (1,)).fill_({C})", flat(slice(0, 1)), _some, region="flat[:1]"
    ),
    "copy-tail": Write(
        "{T}[1:].copy_(torch.full_like({T}[1:], {C}))", rows(slice(1, None)), region="[1:]"
    ),
    "var-index": Write(
        "{T}[k % {T}.shape[0]] = {C}", lambda r, c, n, k, f: _grid([k % r], list(range(c))), _some
    ),
    "n-index": Write(
        "{T}[n] = {C}", lambda r, c, n, k, f: _grid([n], list(range(c))), lambda r, n: n < r
    ),
    "tensor-index": Write("{T}[torch.tensor([0])] = {C}", rows(slice(0, 1)), _some, region="[:1]"),
    "tensor-range": Write(
        "{T}[torch.arange(1, {T}.shape[0])] = {C}", rows(slice(1, None)), _some, region="[1:]"
    ),
    "flag-head": Write("if flag:\n    {T}[:1] = {C}", _flag(rows(slice(None, 1))), region="[:1]"),
    "flag-both": Write(
        "if flag:\n    {T}[:1] = {C}\nelse:\n    {T}[:1] = {D}",
        rows(slice(None, 1)),
        region="[:1]",
    ),
    "n-head": Write(
        "if n > 0:\n    {T}[:1] = {C}",
        lambda r, c, n, k, f: rows(slice(None, 1))(r, c, n, k, f) if n > 0 else set(),
        region="[:1]",
    ),
    "loop-n": Write(
        "for j in range(n):\n    {T}[j] = {C}",
        lambda r, c, n, k, f: _grid(list(range(n)), list(range(c))),
        lambda r, n: n <= r,
    ),
    "loop-from-1": Write(
        "for j in range(1, {T}.shape[0]):\n    {T}[j] = {C}", rows(slice(1, None)), region="[1:]"
    ),
    "loop-all": Write("for j in range({T}.shape[0]):\n    {T}[j] = {C}", ALL),
    "fill": Write("{T}.fill_({C})", ALL),
    "full-slice": Write("{T}[:] = {C}", ALL),
    "full-copy": Write("{T}.copy_(torch.full_like({T}, {C}))", ALL),
    "zero": Write("{T}.zero_()", ALL),
    "full-out": Write("torch.add(torch.ones_like({T}), 1, out={T})", ALL),
    "add-inplace": Write("{T}.add_(1)", NOTHING),
    "clamp-inplace": Write("{T}.clamp_(min=0)", NOTHING),
    "helper-head": Write(
        "{H}({T}, True)", rows(slice(0, 1)), _some, region="[:1]", helper="t[0] = {C}"
    ),
    "helper-tail": Write(
        "{H}({T}, True)", rows(slice(1, None)), region="[1:]", helper="t[1:] = {C}"
    ),
    "helper-full": Write("{H}({T}, True)", ALL, helper="t.fill_({C})"),
    "helper-flag": Write(
        "{H}({T}, flag)",
        _flag(rows(slice(None, 1))),
        region="[:1]",
        helper="if on:\n    t[:1] = {C}",
    ),
    "nested-head": Write(
        "def w{u}():\n    {T}[:1] = {C}\n\nw{u}()", rows(slice(None, 1)), region="[:1]"
    ),
    "lambda-head": Write("(lambda: {T}[:1].fill_({C}))()", rows(slice(None, 1)), region="[:1]"),
    "comprehension-head": Write(
        "[{T}[j : j + 1].fill_({C}) for j in range(1)]", rows(slice(None, 1)), region="[:1]"
    ),
    "try-tail": Write(
        "try:\n    {T}[1:] = {C}\nexcept RuntimeError:\n    pass",
        rows(slice(1, None)),
        region="[1:]",
    ),
    "finally-head": Write(
        "try:\n    pass\nfinally:\n    {T}[:1] = {C}", rows(slice(None, 1)), region="[:1]"
    ),
    "cols-left": Write("{T}[:, :4] = {C}", cols(slice(None, 4)), dims=2, region="[:, :4]"),
    "cols-right": Write("{T}[:, 4:] = {C}", cols(slice(4, None)), dims=2, region="[:, 4:]"),
    "col0": Write("{T}[:, 0] = {C}", cols(slice(0, 1)), dims=2, region="[:, :1]"),
    "T-col0": Write("{T}.T[0] = {C}", cols(slice(0, 1)), dims=2, region="[:, :1]"),
}
# Writes of part of the buffer, drawn more often: the shape is about what they leave.
_PART = ("tail", "tail", "cumsum-out", "cumsum-out", "cols-left", "cols-left", "but-last",
         "even", "odd", "mid", "alias-tail", "flat-tail", "narrow-tail", "copy-tail", "last",
         "head")  # fmt: skip

READS: dict[str, tuple[str, Where]] = {
    "all": ("t.float().sum()", ALL),
    "[1:]": ("t[1:].float().sum()", rows(slice(1, None))),
    "[:1]": ("t[:1].float().sum()", rows(slice(None, 1))),
    "[-1:]": ("t[-1:].float().sum()", rows(slice(-1, None))),
    "[:-1]": ("t[:-1].float().sum()", rows(slice(None, -1))),
    "[::2]": ("t[::2].float().sum()", rows(slice(None, None, 2))),
    "[1::2]": ("t[1::2].float().sum()", rows(slice(1, None, 2))),
    "[1:3]": ("t[1:3].float().sum()", rows(slice(1, 3))),
    "flat[1:]": ("t.reshape(-1)[1:].float().sum()", flat(slice(1, None))),
    "flat[:1]": ("t.reshape(-1)[:1].float().sum()", flat(slice(None, 1))),
    "[:, :4]": ("t[:, :4].float().sum()", cols(slice(None, 4))),
    "[:, 4:]": ("t[:, 4:].float().sum()", cols(slice(4, None))),
    "[:, :1]": ("t[:, :1].float().sum()", cols(slice(None, 1))),
}
# What a reader does first: nothing, write the first row, write all of it.
FIRST: dict[str, tuple[str, Where]] = {
    "none": ("", NOTHING),
    "head": ("t[:1] = {C}", rows(slice(None, 1))),
    "fill": ("t.fill_({C})", ALL),
}
# How the producer returns `{T}`, and how a caller takes the buffer `t` out of `r`: `{N}` the
# shape as the callers spell it. The second line is used when the caller reads all of it.
RETURNS: dict[str, tuple[str, str, str]] = {
    "self": ("{T}", "t = r", "t = r"),
    "view-flat": ("{T}.view(-1)", "t = r.view({N})", "t = r"),
    "unsqueeze": ("{T}.unsqueeze(0)", "t = r[0]", "t = r"),
    "tuple": ("{T}, n", "t = r[0]", "t, _ = r"),
    "tuple-second": ("n, {T}", "t = r[1]", "_, t = r"),
    "list": ("[{T}]", "t = r[0]", "(t,) = r"),
    "dict": ('{"buf": {T}, "n": n}', 't = r["buf"]', 't = r["buf"]'),
}
PATHS = ("plain", "plain", "plain", "plain", "early", "other", "rebound")
CALLERS = ("computed", "computed", "reader", "reader", "param", "up")
_READERS = ("all", "all", "written", "written", "written", "head", "tail", "first-head",
            "first-fill")  # fmt: skip


class ProducerShapes(Blocks):
    """`shape_producer`: one public producer per piece (an opt-in whole-program shape)."""

    def shape_producer(self, u: str, b: Buf) -> Piece:
        x, mk = b.name, f"producer{u}"
        size_name = self.ch.choice(list(_SIZE_DRAW))
        size = SIZES[size_name]
        ns = sorted({n for _, n, _, _ in INPUTS})
        usable = [
            name
            for name, w in WRITES.items()
            if (w.dims != 2 or size.two()) and all(w.ok(size.rows(n), n) for n in ns)
        ]
        part = [name for name in _PART if name in usable]
        chosen = [self.ch.choice(part)] if part and self.ch.chance(70) else []
        chosen += [self.ch.choice(usable) for _ in range(self.ch.integer(0 if chosen else 1, 2))]
        ret_name = self.ch.choice(list(RETURNS))
        path = self.ch.choice(list(PATHS))
        caller = self.ch.choice(list(CALLERS))
        reader = self.ch.choice(list(_READERS))
        tags = {f"wp-producer-size-{size_name}", f"wp-producer-return-{ret_name}",
                f"wp-producer-path-{path}", f"wp-producer-caller-{caller}",
                f"wp-producer-read-{reader}"}  # fmt: skip
        tags |= {f"wp-producer-write-{name}" for name in chosen}
        kw = "" if b.dtype == "float32" else ", dtype=torch.int64"
        lib: list[str] = []
        names: list[str] = []
        body = [f"{x} = {size.text.replace('{kw}', kw)}"]
        for i, name in enumerate(chosen):
            w = WRITES[name]
            h = f"put{u}_{i}"
            if w.helper:
                text = w.helper.replace("{C}", self.const(b))
                lib += [f"def {h}(t, on):", *ind(text.split("\n")), "", ""]
                names.append(h)
            text = w.text.replace("{T}", x).replace("{u}", f"{u}_{i}").replace("{H}", h)
            text = text.replace("{C}", self.const(b)).replace("{D}", self.const(b))
            body += text.split("\n")
        ret = RETURNS[ret_name][0].replace("{T}", x)
        if path == "early":
            body[1:1] = ["if flag:", f"    return {ret}"]
        elif path == "other":
            other = RETURNS[ret_name][0].replace("{T}", f"torch.ones_like({x})")
            body += ["if not flag:", f"    return {other}"]
        elif path == "rebound":
            body.append(f"{x} = torch.ones_like({x})")
        body.append(f"return {ret}")
        local = [f"def {mk}(inp, n, k, flag):", *ind(body), "", ""]

        # What the caller reads, and what it writes first.
        first_name = {"first-head": "head", "first-fill": "fill"}.get(reader, "none")
        regions = [WRITES[name].region for name in chosen if WRITES[name].region]
        read_name = {"all": "all", "head": "[:1]", "tail": "[1:]"}.get(reader, "all")
        if reader == "written" and regions:
            read_name = self.ch.choice(regions)
        first, first_cells = FIRST[first_name]
        read, read_cells = READS[read_name]
        whole = read_name == "all" and first_name == "none"
        take = RETURNS[ret_name][2 if whole else 1].replace("{N}", size.dims)
        steps = [take, *([first.replace("{C}", self.const(b))] if first else [])]
        call = f"{mk}(inp, n, k, flag)"
        fbody: list[str]
        if caller == "computed":
            got = f'globals()["pro" + "ducer{u}"](inp, n, k, flag)'
            fbody = [f"r{u} = {got}", *(_renamed(s, u) for s in steps)]
            fbody.append(f"out.append({_renamed(read, u)})")
        elif caller in ("reader", "up"):
            if caller == "up":  # a private function returns it again to the reader
                local += [f"def _up{u}(inp, n, k, flag):", f"    return {call}", "", ""]
                call = f"_up{u}(inp, n, k, flag)"
            local += [f"def use{u}(inp, n, k, flag):", f"    r = {call}", *ind(steps),
                      f"    return {read}", "", ""]  # fmt: skip
            fbody = [f"out.append(use{u}(inp, n, k, flag))"]
        else:
            local += [f"def use{u}(inp, n, k, flag, fn):", f"    r = {call}", f"    {take}",
                      "    return fn(t)", "", ""]  # fmt: skip
            if first:
                local += [f"def rd{u}(t):", f"    {first.replace('{C}', self.const(b))}",
                          f"    return {read}", "", ""]  # fmt: skip
                fn = f"rd{u}"
            else:
                fn = f"lambda t: {read}"
            fbody = [f"out.append(use{u}(inp, n, k, flag, {fn}))"]

        differs = False
        for _, n, k, flag in INPUTS:
            r, c = size.rows(n), size.cols
            written: Cells = set()
            if not (path == "early" and flag):
                for name in chosen:
                    written |= WRITES[name].cells(r, c, n, k, flag)
            handed = path != "rebound" and not (path == "other" and not flag)
            taken = read_cells(r, c, n, k, flag) if handed else set()
            written |= first_cells(r, c, n, k, flag)
            differs = differs or bool(taken - written)
        return Piece(lib, local, [ALLOC_IN_CLASS, *fbody], names, tags, differs)


def _renamed(line: str, u: str) -> str:
    """A caller's line with its names `r` and `t` made the piece's own (f holds them)."""
    return re.sub(r"\b([rt])\b", rf"\g<1>{u}", line)
