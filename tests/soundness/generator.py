"""Small random PyTorch programs that exercise every construct the analysis claims to understand.

One program model, two drivers: `build_program` makes every decision through a `Chooser`, so the
same code backs a seeded plain-random generator (`random_program(seed)`: cheap, reproducible, for
the bench's thousands of programs) and a hypothesis strategy (`programs()`: shrinks a failing
program to a small one). Programs are source text of a module defining `f(inp, n, k, flag)`, run
on CPU with tiny shapes over `INPUTS`; `n` is a loop count that may be 0, `k` a slice bound that
may be 0 or past the end, `flag` picks branches. Buffer names never get rebound, so every
allocation site is one buffer.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

import torch

T = TypeVar("T")

ROWS, COLS = 4, 8


class Chooser(Protocol):
    """Where every random decision comes from; options are listed simplest first (for shrinking)."""

    def choice(self, options: Sequence[T]) -> T: ...

    def integer(self, lo: int, hi: int) -> int: ...

    def chance(self, percent: int) -> bool: ...


class RandomChooser:
    def __init__(self, seed: int) -> None:
        self._rng = random.Random(seed)

    def choice(self, options: Sequence[T]) -> T:
        return options[self._rng.randrange(len(options))]

    def integer(self, lo: int, hi: int) -> int:
        return self._rng.randint(lo, hi)

    def chance(self, percent: int) -> bool:
        return self._rng.randrange(100) < percent


class HypothesisChooser:
    """Draws from hypothesis so that shrinking walks towards the first option and fewer statements."""

    def __init__(self, draw: Callable[[Any], Any]) -> None:
        self._draw = draw

    def choice(self, options: Sequence[T]) -> T:
        from hypothesis import strategies as st

        return self._draw(st.sampled_from(options))

    def integer(self, lo: int, hi: int) -> int:
        from hypothesis import strategies as st

        return self._draw(st.integers(lo, hi))

    def chance(self, percent: int) -> bool:
        from hypothesis import strategies as st

        # integers shrink towards 0, which must mean "no": shrinking removes optional parts.
        return self._draw(st.integers(0, 99)) >= 100 - percent


@dataclass(frozen=True)
class Handle:
    """A name in scope that refers to tensor memory the program may read or write."""

    name: str
    shape: tuple[int, ...] | None  # None: data-dependent (a bounded slice, a gather result)
    dtype: str  # "float32" | "int64" | "int32" | "bool"
    contiguous: bool = True

    @property
    def numeric(self) -> bool:
        return self.dtype != "bool"


@dataclass(frozen=True)
class Program:
    source: str
    tags: frozenset[str] = field(default_factory=frozenset)  # constructs it uses, for coverage


def make_inp(variant: int) -> torch.Tensor:
    """Deterministic inputs with positive, negative and zero entries, so masks are partial."""
    base = torch.arange(ROWS * COLS, dtype=torch.float32).reshape(ROWS, COLS)
    if variant == 0:
        return (base % 5 - 2) * 0.75
    return torch.cos(base * 1.3) * 3.0


# (inp variant, n, k, flag): loops that run 0..3 times, slice bounds 0, inside and past the end.
INPUTS: tuple[tuple[int, int, int, bool], ...] = (
    (0, 0, 0, False),
    (0, 2, 3, True),
    (1, 1, 8, False),
    (1, 3, 5, True),
    (0, 0, 2, True),
    (1, 2, 0, False),
)

SHAPE_BASE = {
    (ROWS, COLS): "inp",
    (COLS,): "inp[1]",
    (ROWS * COLS,): "inp.reshape(-1)",
    (COLS, ROWS): "inp.t()",
}
DTYPES = ("float32", "int64", "int32", "bool")

PRELUDE = """\
class Box:
    pass


def helper_read(t):
    return t.float().sum()


def helper_write(t):
    t.fill_(3)
    return t


def helper_partial(t):
    t[:1] = 1
    return t


def helper_noop(t):
    return t.shape[0]


def helper_ident(t):
    return t
"""


class _Gen:
    def __init__(self, ch: Chooser) -> None:
        self.ch = ch
        self.counter = 0
        self.sites = 0
        self.tags: set[str] = set()
        self.torch_names = ["torch"]
        self.from_import = False
        self.callables: list[tuple[str, str]] = []  # (name, kind: "read" | "write")
        self.in_inner = False  # generating the body of a nested function
        self.bump = False  # f defines bump(), which rebinds k through `nonlocal`
        self.kt = False  # f defines kt, a 0-dim tensor slice bound
        self.global_k = False  # the module defines K and bump_global()

    # ---- expressions -------------------------------------------------------------------------

    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def src(self, h: Handle) -> str:
        """A tensor of h's shape and dtype that does not depend on any buffer."""
        assert h.shape is not None
        base = SHAPE_BASE[h.shape]
        if h.dtype == "float32":
            return self.ch.choice([base, f"({base} * 2 + 1)", f"{base}.flip(0)"])
        if h.dtype == "bool":
            return f"({base} > 0)"
        return f"({base} * 10).to(torch.{h.dtype})"

    def const(self, h: Handle) -> str:
        if h.dtype == "float32":
            return self.ch.choice(["2.5", "-1.5", "0.0"])
        if h.dtype == "bool":
            return self.ch.choice(["True", "False"])
        return self.ch.choice(["7", "3", "0"])

    def mask(self, h: Handle) -> str:
        assert h.shape is not None
        return f"({SHAPE_BASE[h.shape]} > 0.5)"

    def alloc(self, shape: tuple[int, ...], dtype: str) -> str:
        self.sites += 1
        dims = ", ".join(map(str, shape))
        dims = self.ch.choice([dims, f"({dims},)" if len(shape) == 1 else f"({dims})"])
        kw = "" if dtype == "float32" else f", dtype=torch.{dtype}"
        like = SHAPE_BASE[shape]
        t = self.ch.choice(self.torch_names)
        forms = [
            f"{t}.zeros({dims}{kw})",
            f"{t}.zeros_like({like}{kw})",
            f"{like}.new_zeros({dims}{kw})",
            f"{t}.zeros({dims}{kw}, device=inp.device)",
        ]
        if self.from_import:
            forms.append(f"zeros({dims}{kw})")
        form = self.ch.choice(forms)
        self.tags.add(
            "zeros_like"
            if "zeros_like" in form
            else "new_zeros"
            if "new_zeros" in form
            else "zeros"
        )
        return form

    # ---- statements: each returns lines relative to the current indentation -----------------

    def stmt_alloc(self, hs: list[Handle], prefix: str = "") -> list[str]:
        shape = self.ch.choice([(COLS,), (ROWS, COLS)])
        dtype = self.ch.choice(DTYPES) if self.ch.chance(40) else "float32"
        name = prefix + self.fresh("b")
        h = Handle(name, shape, dtype)
        hs.append(h)
        lines = [f"{name} = {self.alloc(shape, dtype)}"]
        # The pattern the tool exists for: allocate, then fill before use. Without this bias
        # most buffers are read first and recall would be measured on too few sites.
        if self.ch.chance(45):
            lines += self.full_write(h)
        return lines

    def full_write(self, h: Handle) -> list[str]:
        x, c = h.name, self.const(h)
        opts: list[Callable[[], list[str]]] = [
            lambda: [f"{x}.fill_({c})"],
            lambda: [f"{x}.zero_()"],
            lambda: [f"{x}[:] = {c}"],
            lambda: [f"{x}[...] = {c}"],
            lambda: [f"for j in range(len({x})):", f"    {x}[j] = {c}"],
        ]
        if h.shape is not None:
            s = self.src(h)
            opts += [
                lambda: [f"{x}.copy_({s})"],
                lambda: [f"{x}[:] = {s}"],
                lambda: [f"{x}.unsqueeze(0).copy_({s}.unsqueeze(0))"],
            ]
            if len(h.shape) == 2:
                if h.shape == (ROWS, COLS):
                    row = self.src(Handle("", (COLS,), h.dtype))
                    opts.append(lambda: [f"{x}.copy_({row})"])  # broadcasting copy: still full
                opts += [lambda: [f"{x}.t().copy_({s}.t())"], lambda: [f"{x}.T.fill_({c})"]]
            if h.contiguous:
                opts += [
                    lambda: [f"{x}.view(-1).fill_({c})"],
                    lambda: [f"{x}.reshape(-1).copy_({s}.reshape(-1))"],
                    lambda: [f"{x}.flatten().fill_({c})"],
                ]
            if h.dtype in ("float32", "int64"):
                opts += [
                    lambda: [f"torch.add({s}, 1, out={x})"],
                    lambda: [f"torch.cat([{s}[:2], {s}[2:]], out={x})"],
                    lambda: [f"torch.mul({s}, {s}, out={x})"],
                ]
            if h.dtype == "float32":
                opts.append(lambda: [f"{x}.uniform_()"])
            # complementary slices: together they write everything
            opts += [
                lambda: [f"{x}[:k] = {c}", f"{x}[k:] = {self.const(h)}"],
                lambda: [f"{x}[:2] = {s}[:2]", f"{x}[2:] = {s}[2:]"],
                lambda: [f"{x}[:-1] = {c}", f"{x}[-1] = {c}"],
            ]
            if len(h.shape) == 2:
                opts.append(lambda: [f"{x}[:, :k] = {c}", f"{x}[:, k:] = {c}"])
            opts += self.loop_writes(h, c)
        self.tags.add("full-write")
        return self.ch.choice(opts)()

    def loop_writes(self, h: Handle, c: str) -> list[Callable[[], list[str]]]:
        """Loops that write every index of a dimension: by the buffer's own size, the literal
        size of the allocation, two nested loops, or every residue of a step."""
        assert h.shape is not None
        x, e, r = h.name, self.fresh("e"), self.fresh("r")
        rows = h.shape[0]
        opts: list[Callable[[], list[str]]] = [
            lambda: [f"for {e} in range({x}.shape[0]):", f"    {x}[{e}] = {c}"],
            lambda: [f"for {e} in range({x}.size(0)):", f"    {x}[{e}] = {c}"],
            lambda: [f"for {e} in range({rows}):", f"    {x}[{e}] = {c}"],
            lambda: [f"for {r} in range(2):", f"    {x}[{r}::2] = {c}"],
        ]
        if len(h.shape) == 2:
            cols = h.shape[1]
            opts += [
                lambda: [
                    f"for {e} in range({x}.shape[0]):",
                    f"    for {r} in range({x}.size(1)):",
                    f"        {x}[{e}, {r}] = {c}",
                ],
                lambda: [f"for {r} in range({cols}):", f"    {x}[:, {r}] = {c}"],
                lambda: [f"for {r} in range(4):", f"    {x}[:, {r}::4] = {c}"],
            ]
        return [self._tagged(o, "loop-write") for o in opts]

    def _tagged(self, option: Callable[[], list[str]], tag: str) -> Callable[[], list[str]]:
        def chosen() -> list[str]:
            self.tags.add(tag)
            return option()

        return chosen

    def loop_near_misses(self, h: Handle, c: str) -> list[Callable[[], list[str]]]:
        """Loops that look like `loop_writes` but leave an index unwritten."""
        assert h.shape is not None
        x, e = h.name, self.fresh("e")
        opts: list[Callable[[], list[str]]] = [
            lambda: [f"for {e} in range({x}.shape[0] - 1):", f"    {x}[{e}] = {c}"],
            lambda: [f"for {e} in range(n):", f"    {x}[{e}] = {c}"],
            lambda: [f"for {e} in range(1):", f"    {x}[{e}::2] = {c}"],
            lambda: [
                f"for {e} in range({x}.shape[0]):",
                "    if flag:",
                "        continue",
                f"    {x}[{e}] = {c}",
            ],
            lambda: [f"for {e} in range({x}.shape[0]):", f"    {x}[{e}] = {c}", "    break"],
        ]
        if len(h.shape) == 2:
            opts.append(lambda: [f"for {e} in range({x}.shape[0]):", f"    {x}[:, {e}] = {c}"])
        return [self._tagged(o, "loop-near-miss") for o in opts]

    def partial_write(self, h: Handle, loop_var: str | None) -> list[str]:
        x, c = h.name, self.const(h)
        opts: list[Callable[[], list[str]]] = [
            lambda: [f"{x}[:k] = {c}"],
            lambda: [f"{x}[k:] = {c}"],
            lambda: [f"{x}[1:3] = {c}"],
            lambda: [f"{x}.narrow(0, 0, min(k, len({x}))).fill_({c})"],
        ]
        if h.shape is not None:
            s = self.src(h)
            opts += [
                lambda: [f"{x}[0] = {c}"],
                lambda: [f"{x}[:k] = {s}[:k]"],
                lambda: [f"{x}[{self.mask(h)}] = {c}"],
                lambda: [f"{x}[idx] = {c}"],
                lambda: [f"{x}.index_copy_(0, idx, {s}[idx])"],
                lambda: [f"{x}.masked_fill_({self.mask(h)}, {c})"],
                lambda: [f"{x}.select(0, 1).fill_({c})"],
                # near-misses of complementary slices: one element or more stays unwritten
                lambda: [f"{x}[:k] = {c}", f"{x}[k + 1:] = {c}"],
                lambda: [f"{x}[:k] = {c}", f"{x}[-k:] = {c}"],
                lambda: [f"{x}[:k] = {c}", f"{x}[k:n] = {c}"],
                lambda: [f"{x}[1:] = {c}"],
                lambda: [f"{x}[:-1] = {c}"],
            ]
            if len(h.shape) == 1:
                opts.append(lambda: [f"{x}.scatter_(0, idx, {s})"])
            else:
                opts += [lambda: [f"{x}[:, :k] = {c}"], lambda: [f"{x}[:k, :] = {c}"]]
            if loop_var is not None:
                opts.append(lambda: [f"{x}[{loop_var}] = {c}"])
            opts += self.loop_near_misses(h, c)
        self.tags.add("partial-write")
        return self.ch.choice(opts)()

    def view_write(self, h: Handle, hs: list[Handle]) -> list[str]:
        """Write through an alias or view, sometimes keeping the alias for later statements."""
        x, c = h.name, self.const(h)
        v = self.fresh("v")
        self.tags.add("view")
        opts: list[Callable[[], list[str]]] = [
            lambda: [f"{v} = {x}", f"{v}.fill_({c})"],
            lambda: [f"{v} = {x}[:k]", f"{v}.fill_({c})"],
            lambda: [f"{v} = {x}[k:]", f"{v}[:] = {c}"],
        ]
        flat: tuple[int, ...] | None = None
        if h.shape in ((ROWS, COLS), (COLS,)) and h.contiguous:
            flat = (ROWS * COLS,) if h.shape == (ROWS, COLS) else (COLS,)
            s = self.src(Handle("", flat, h.dtype))
            opts.append(lambda: [f"{v} = {x}.view(-1)", f"{v}.copy_({s})"])
        lines = self.ch.choice(opts)()
        kept_shape = (
            h.shape if lines[0] == f"{v} = {x}" else flat if ".view(-1)" in lines[0] else None
        )
        if self.ch.chance(50):
            hs.append(Handle(v, kept_shape, h.dtype, h.contiguous))
        return lines

    def gather(self, h: Handle, hs: list[Handle]) -> list[str]:
        """Advanced indexing copies: writing the copy must not count as writing the buffer."""
        x, c = h.name, self.const(h)
        g = self.fresh("g")
        self.tags.add("gather")
        if h.shape is None:  # may be short or empty: index within its own length
            index = f"torch.arange(len({x})).flip(0)"
        else:
            index = self.ch.choice(["idx", "[0, 1]", self.mask(h)])
        lines = [f"{g} = {x}[{index}]"]
        if self.ch.chance(70):
            lines.append(f"{g}.fill_({c})")
        if self.ch.chance(50):
            hs.append(Handle(g, None, h.dtype))
        return lines

    def read(self, h: Handle, loop_var: str | None) -> list[str]:
        x = h.name
        self.tags.add("read")
        opts: list[Callable[[], list[str]]] = [
            lambda: [f"acc = acc + {x}.float().sum()"],
            lambda: [f"acc = acc + {x}[:k].float().sum()"],
            lambda: [f"acc = acc + ({x}.float() * 2).cumsum(0).sum()"],
            lambda: [f"if {x}.float().sum() > 0:", "    acc = acc + 1"],
            lambda: [f"acc = acc + {x}.clone().float().sum()"],
            lambda: [
                f"acc = acc + sum(float({x}[j].float().sum()) for j in range(min(2, len({x}))))"
            ],
            lambda: [
                f"acc = acc + torch.stack([{x}[j].float().sum() for j in range(min(n, len({x})))] + [acc * 0]).sum()"
            ],
        ]
        if h.shape is not None:
            opts += [
                lambda: [f"acc = acc + {x}.float().amax()"],
                lambda: [f"acc = acc + {x}[idx].float().sum()"],
                lambda: [f"acc = acc + torch.where({self.mask(h)}, {x}.float(), 0.0).sum()"],
                lambda: [f"acc = acc + {x}[1:].float().sum()"],
            ]
            if loop_var is not None:
                opts.append(lambda: [f"acc = acc + {x}[{loop_var}].float().sum()"])
            if h.dtype in ("int64", "int32"):
                # buffer values used as indices, like page tables: poison may raise
                opts += [
                    lambda: [f"acc = acc + inp.reshape(-1)[{x}.long().clamp(0, 31)].sum()"],
                    lambda: [f"acc = acc + inp.reshape(-1)[{x}.long()].sum()"],
                ]
        return self.ch.choice(opts)()

    def rmw(self, h: Handle) -> list[str]:
        x, c = h.name, self.const(h)
        self.tags.add("read-modify-write")
        if not h.numeric:
            return [self.ch.choice([f"{x} |= True", f"{x}.logical_or_({x})"])]
        opts: list[Callable[[], list[str]]] = [
            lambda: [f"{x} += {c}"],
            lambda: [f"{x}.mul_(2)"],
            lambda: [f"{x}[:k] += 1"],
            lambda: [f"{x}.clamp_(min=0)"],
        ]
        if h.shape is not None:
            s = self.src(h)
            opts += [
                lambda: [f"{x}.add_({s})"],
                lambda: [f"{x}.index_add_(0, idx, {s}[idx])"],
            ]
            if h.dtype in ("float32", "int64"):
                opts.append(lambda: [f"torch.add({x}, 1, out={x})"])
        return self.ch.choice(opts)()

    def metadata(self, h: Handle) -> list[str]:
        x = h.name
        self.tags.add("metadata")
        return [
            self.ch.choice(
                [
                    f"acc = acc + {x}.shape[0]",
                    f"acc = acc + {x}.size(0)",
                    f"acc = acc + len({x})",
                    f"acc = acc + {x}.numel()",
                    f"acc = acc + {x}.dim()",
                    f"acc = acc + (1 if {x}.dtype == torch.float32 else 2)",
                    f"acc = acc + ({x}.device.type == 'cpu')",
                ]
            )
        ]

    def escape(self, h: Handle, hs: list[Handle]) -> list[str]:
        x, c = h.name, self.const(h)
        self.tags.add("escape")
        opts: list[Callable[[], list[str]]] = [
            lambda: [f"store.append({x})"],
            lambda: [f"holder['{x}'] = {x}"],
            lambda: [f"box.{x.replace('.', '_')} = {x}"],
            lambda: [f"acc = acc + helper_read({x})"],
            lambda: [f"helper_write({x})"],
            lambda: [f"helper_partial({x})"],
            lambda: [f"acc = acc + helper_noop({x})"],
            lambda: [f"fill_all({x})"],
        ]
        name = self.fresh("g")
        opts += [
            lambda: [f"def {name}():", f"    return {x}.float().sum()"],
            lambda: [f"def {name}():", f"    {x}.fill_({c})"],
            lambda: [f"{name} = lambda: {x}.float().sum()"],
        ]
        if h.shape is not None:
            k = self.fresh("a")
            opts.append(lambda: [f"{k} = helper_ident({x})", f"{k}.fill_({c})"])
        # Stored in a container or a lambda, then code that is or is not handed the holder.
        held, t = self.fresh("held"), self.fresh("t")
        held_opts: list[Callable[[], list[str]]] = [
            lambda: [f"{held} = [{x}]", f"for {t} in {held}:", f"    {t}.fill_({c})"],
            lambda: [f"{held} = ({x}, 1)", f"fill_all({held}[0])"],
            lambda: [f"{held} = [{x}]", "acc = acc + helper_noop(inp)"],
            lambda: [f"{held} = {{'t': {x}}}", f"helper_write({held}['t'])"],
            lambda: [f"{held} = lambda: {x}.fill_({c})", f"{held}()"],
        ]
        opts += [self._tagged(o, "holder") for o in held_opts]
        lines = self.ch.choice(opts)()
        if lines[0].startswith(f"def {name}") or lines[0].startswith(f"{name} ="):
            self.callables.append((name, "write" if "fill_" in lines[-1] else "read"))
            self.tags.add("closure")
        return lines

    def tricky(self, h: Handle, hs: list[Handle]) -> list[str]:
        """Constructs that look like full writes, views or plain bounds but are not: each one has
        fooled some analysis somewhere (bounds rebound or mutated between complementary slices,
        copies that look like views, writes an exception or a branch may skip, name and
        attribute aliasing)."""
        x, c = h.name, self.const(h)
        y, z = self.fresh("y"), self.fresh("z")
        self.tags.add("tricky")
        opts: list[Callable[[], list[str]]] = []
        if not self.in_inner:  # rebinding k inside a nested function would make it local there
            rebind = self.ch.choice(["k += 1", "k -= 1", "k = k + 1", "k *= 2", "k -= 2"])
            opts += [
                lambda: [f"{x}[:k] = {c}", rebind, f"{x}[k:] = {c}"],
                lambda: [f"{x}[:k] = {c}", "if flag:", "    k += 2", f"{x}[k:] = {c}"],
            ]
            if self.bump:
                opts.append(lambda: [f"{x}[:k] = {c}", "bump()", f"{x}[k:] = {c}"])
        if self.kt:
            opts.append(lambda: [f"{x}[:kt] = {c}", "kt.add_(1)", f"{x}[kt:] = {c}"])
        if self.global_k:
            opts.append(lambda: [f"{x}[:K] = {c}", "bump_global()", f"{x}[K:] = {c}"])
        opts += [
            lambda: [f"{x}.clone().fill_({c})"],
            lambda: [f"{x}.flip(0).fill_({c})"],
            lambda: [f"{x}[:-k] = {c}"],
            lambda: [f"{x}[False] = {c}"],
            lambda: [f"{x}[::2] = {c}"],
            lambda: [f"{x}[::2] = {c}", f"{x}[1::2] = {c}"],
            lambda: [f"{x}.chunk(2)[0].fill_({c})"],
            lambda: [f"{x}.unbind(0)[0].fill_({c})"],
            lambda: [f"{x}.as_strided((2,), (1,)).fill_({c})"],
            lambda: [
                "with suppress(ValueError):",
                "    if flag:",
                "        raise ValueError('skip')",
                f"    {x}.fill_({c})",
            ],
            lambda: [f"{y} = {x} if flag else {x}.clone()", f"{y}.fill_({c})"],
            lambda: [f"{y}, {z} = {x}.clone(), {x}", f"{y}.fill_({c})"],
            lambda: [f"flag and {x}.fill_({c})"],
            lambda: [f"{x}.fill_({c}) if flag else None"],
            lambda: [
                "for j in range(3):",
                "    if j == k:",
                "        break",
                "else:",
                f"    {x}.fill_({c})",
            ],
            lambda: [f"{x}.fill_({x}.float().sum())"],
            lambda: [f"{x}[:] = {x}.flip(0)"],
            lambda: [f"{y} = {x}.fill_({c})[:k]", f"{y}.fill_({self.const(h)})"],
        ]
        if h.numeric:
            opts.append(lambda: [f"{x}.copy_({x} * 0 + 1)"])
        if h.shape is not None:
            s = self.src(h)
            opts += [
                lambda: ["try:", f"    {x}.copy_({s}[:k])", "except RuntimeError:", "    pass"],
                lambda: [f"{x}.to(torch.float64).fill_(1)"],
                lambda: [
                    f"{y} = {x}",
                    f"{x} = {s}.clone()",
                    f"{x}.fill_({c})",
                    f"acc = acc + {y}.float().sum()",
                ],
                lambda: [
                    "box.t = " + x,
                    "box2 = box",
                    f"box2.t = {s}.clone()",
                    f"box.t.fill_({c})",
                ],
                lambda: [
                    f"holder['a'] = {x}",
                    f"holder['b'] = {x}.clone()",
                    "key = 'a' if flag else 'b'",
                    f"holder[key].fill_({c})",
                ],
            ]
            if h.dtype in ("float32", "int64"):
                dims = ", ".join(map(str, h.shape))
                opts += [
                    lambda: [f"torch.add({s}[:k], 1, out={x}[:k])"],
                    # out= with a smaller result resizes the buffer: only that part is written
                    lambda: [
                        f"{y} = {x}[:]",
                        f"torch.cat([{s}[:k]], out={x})",
                        f"{x}.resize_({dims})",
                        f"acc = acc + {y}.float().sum()",
                    ],
                    lambda: [f"torch.add({s}[:2], 1, out={x})", f"{x}.resize_({dims})"],
                ]
            if h.shape is not None and len(h.shape) == 2:
                opts += [
                    lambda: [f"{x}.t().contiguous().fill_({c})"],
                    lambda: [f"{x}.t().reshape(-1).fill_({c})"],
                    lambda: [f"{x}.diagonal().fill_({c})"],
                    lambda: [f"{x}[..., 0] = {c}"],
                    lambda: [f"{x}[:, 0] = {c}", f"{x}[1:] = {c}"],
                    lambda: [f"{x}[:, :k] = {c}", f"{x}[..., k:] = {c}"],
                ]
        return self.ch.choice(opts)()

    def tricky_alloc(self) -> list[str]:
        """Allocations whose buffer identity is the trap: re-allocated in a loop, stored in a dict."""
        self.tags.add("tricky")
        c = self.ch.choice(["1.5", "2.0"])
        pv = self.fresh("pv")
        if self.ch.chance(50):
            self.tags.add("loop-alloc")
            return [
                f"{pv} = None",
                "for i in range(n + 1):",
                f"    if {pv} is not None:",
                f"        acc = acc + {pv}.float().sum()",
                f"    {pv} = {self.alloc((COLS,), 'float32')}",
                "    if i == 0:",
                f"        {pv}.fill_({c})",
                f"acc = acc + {pv}.float().sum()",
            ]
        return [
            f"{pv} = {{'a': {self.alloc((COLS,), 'float32')}, 'b': {self.alloc((COLS,), 'float32')}}}",
            "key = 'a' if flag else 'b'",
            f"{pv}[key].fill_({c})",
            f"acc = acc + {pv}['a'].float().sum()",
        ]

    def call_closure(self) -> list[str]:
        name, kind = self.ch.choice(self.callables)
        return [f"acc = acc + {name}()"] if kind == "read" else [f"{name}()"]

    def ret_expr(self, hs: list[Handle]) -> str:
        items: list[str] = []
        for _ in range(self.ch.integer(1, 3)):
            opts = ["acc", "store", "holder", "vars(box)"]
            if hs:
                h = self.ch.choice(hs)
                opts = [h.name, f"{h.name}.float().sum()", f"{h.name}[:k]", *opts]
            items.append(self.ch.choice(opts))
        return items[0] if len(items) == 1 else "(" + ", ".join(items) + ")"

    def block(
        self, hs: list[Handle], depth: int, size: int, loop_var: str | None, in_loop: bool = False
    ) -> list[str]:
        """A statement list; names created inside stay inside (they may not exist on other paths)."""
        scope = list(hs)
        callables = list(self.callables)
        lines: list[str] = []
        for _ in range(size):
            lines += self.statement(scope, depth, loop_var, in_loop)
        self.callables = callables
        return lines or ["pass"]

    def statement(
        self, hs: list[Handle], depth: int, loop_var: str | None, in_loop: bool
    ) -> list[str]:
        kinds = [
            "full",
            "partial",
            "read",
            "meta",
            "view",
            "gather",
            "rmw",
            "escape",
            "alloc",
            "control",
            "return",
            "tricky",
            "tricky",
        ]
        if self.callables:
            kinds.append("call")
        kind = self.ch.choice(kinds)
        if kind == "alloc" or (not hs and kind not in ("control", "return")):
            if self.sites >= 4:
                return ["acc = acc + 1"]
            return self.stmt_alloc(hs)
        if kind == "control":
            if depth >= 2:
                return self.full_write(self.ch.choice(hs)) if hs else ["pass"]
            return self.control(hs, depth + 1, loop_var, in_loop)
        if kind == "return":
            self.tags.add("early-return")
            cond = self.ch.choice(["flag", "k == 0", "n > 1"])
            return [f"if {cond}:", f"    return {self.ret_expr(hs)}"]
        if kind == "call":
            return self.call_closure()
        if kind == "tricky" and self.sites <= 2 and self.ch.chance(20):
            return self.tricky_alloc()
        h = self.ch.choice(hs)
        if kind == "tricky":
            return self.tricky(h, hs)
        if kind == "full":
            return self.full_write(h)
        if kind == "partial":
            return self.partial_write(h, loop_var)
        if kind == "read":
            return self.read(h, loop_var)
        if kind == "meta":
            return self.metadata(h)
        if kind == "view":
            return self.view_write(h, hs)
        if kind == "gather":
            return self.gather(h, hs)
        if kind == "rmw":
            return self.rmw(h)
        return self.escape(h, hs)

    def control(
        self, hs: list[Handle], depth: int, loop_var: str | None, in_loop: bool
    ) -> list[str]:
        def body(lv: str | None = loop_var, loop: bool = in_loop) -> list[str]:
            return [
                "    " + line for line in self.block(hs, depth, self.ch.integer(1, 3), lv, loop)
            ]

        form = self.ch.choice(
            [
                "if",
                "if-else",
                "for",
                "for-else",
                "for-break",
                "while",
                "while-true",
                "try",
                "try-finally",
                "with",
                "match",
                "nested-def",
                "elif",
            ]
        )
        self.tags.add(form)
        i = self.fresh("i")
        if form == "if":
            return [f"if {self.ch.choice(['flag', 'k > 2', 'not flag'])}:", *body()]
        if form == "if-else":
            return ["if flag:", *body(), "else:", *body()]
        if form == "elif":
            return ["if k > 4:", *body(), "elif k > 0:", *body(), "else:", *body()]
        if form == "for":
            return [f"for {i} in range(n):", *body(i, True)]
        if form == "for-else":
            return [f"for {i} in range(n):", *body(i, True), "else:", *body()]
        if form == "for-break":
            return [f"for {i} in range(3):", *body(i, True), f"    if {i} >= k:", "        break"]
        if form == "while":
            return [f"{i} = 0", f"while {i} < n:", *body(i, True), f"    {i} += 1"]
        if form == "while-true":
            return ["while True:", *body(None, True), "    break"]
        if form in ("try", "try-finally"):
            raise_line = [
                f"    if {self.ch.choice(['flag', 'k > 3', 'n == 0'])}:",
                "        raise ValueError('boom')",
            ]
            lines = ["try:", *body(), *raise_line, *body(), "except ValueError:", *body()]
            if form == "try-finally":
                lines += ["finally:", *body()]
            return lines
        if form == "with":
            return ["with torch.no_grad():", *body()]
        if form == "match":
            return [
                "match k:",
                "    case 0:",
                *["    " + x for x in body()],
                "    case _:",
                *["    " + x for x in body()],
            ]
        # nested function, called zero or more times
        name = self.fresh("inner")
        outer, self.in_inner = self.in_inner, True
        inner = ["    nonlocal acc", *body(None, False)]
        self.in_inner = outer
        calls = self.ch.choice(
            [[f"{name}()"], [], ["if flag:", f"    {name}()"], [f"{name}()", f"{name}()"]]
        )
        return [f"def {name}():", *inner, *calls]


LIFECYCLE_SETUPS = (
    "init_forward_metadata_capture_cuda_graph",
    "init_forward_metadata_replay_cuda_graph",
    "init_forward_metadata",
)
# SGLang's order: capture-time metadata then a warm-up forward that really runs, replay-time
# metadata then the forward, and eager steps; the analysis must hold for any order, so for this one.
LIFECYCLE_DRIVER = """\
def f(inp, n, k, flag):
    m = Backend()
    m.init_cuda_graph_state(inp, n, k, flag)
    outs = []
    for setup in (m.init_forward_metadata_capture_cuda_graph, m.init_forward_metadata_replay_cuda_graph, m.init_forward_metadata):
        setup(inp, n, k, flag)
        outs.append(m.forward_decode(inp, n, k, flag))
    return outs, m.trace
"""


def build_program(ch: Chooser, delegation: bool = False) -> Program:
    """With `delegation`, always the lifecycle class, without its driver (the caller adds a
    wrapper forwarding its hooks: tests/soundness/delegation.py), its buffers allocated in
    `__init__` or in `init_cuda_graph_state`."""
    g = _Gen(ch)
    header = ["import torch"]
    if ch.chance(20):
        header.append("import torch as th")
        g.torch_names.append("th")
    if ch.chance(15):
        header.append("from torch import zeros")
        g.from_import = True
    header.append("from contextlib import suppress")
    fill_c = ch.choice(["1.0", "2"])
    module_extra: list[str] = []
    if ch.chance(20):
        g.global_k = True
        module_extra = ["K = 0", "", "", "def bump_global():", "    global K", "    K += 1", "", ""]
    g.bump, g.kt = ch.chance(30), ch.chance(30)

    def prologue() -> list[str]:
        lines = ["global K", "K = k"] if g.global_k else []
        lines += [
            "acc = inp.sum() * 0",
            "idx = torch.tensor([0, 2, 3])",
            "store = []",
            "holder = {}",
            "box = Box()",
            "def fill_all(t):",
            f"    t.fill_({fill_c})",
        ]
        if g.bump:
            lines += ["def bump():", "    nonlocal k", "    k += 1"]
        if g.kt:
            lines += ["kt = torch.tensor(k)"]
        return lines

    def indent(lines: list[str], by: str = "    ") -> list[str]:
        return [by + line if line else line for line in lines]

    hs: list[Handle] = []
    if delegation or ch.chance(25):
        # A class with an SGLang attention-backend lifecycle: buffers allocated on self in
        # init_cuda_graph_state, written by the metadata setups, read by the forward.
        g.tags.add("lifecycle")
        init = [*prologue(), "self.trace = []"]
        for _ in range(ch.integer(1, 2)):
            init += g.stmt_alloc(hs, prefix="self.")
        methods = [("init_cuda_graph_state", [*init, "return acc"])]
        if delegation and ch.chance(50):  # allocated in `__init__`; graph init may write them
            body = prologue()
            for _ in range(ch.integer(0, 3)):
                body += g.statement(list(hs), 0, None, False)
            methods = [("__init__", init), ("init_cuda_graph_state", [*body, "self.trace.append(acc)"])]
            g.tags.add("alloc-in-init")
        for name in LIFECYCLE_SETUPS:
            body = prologue()
            for _ in range(ch.integer(0, 4)):
                body += g.statement(list(hs), 0, None, False)
            methods.append((name, [*body, "self.trace.append(acc)"]))
        body = prologue()
        for _ in range(ch.integer(0, 3)):
            body += g.statement(list(hs), 0, None, False)
        methods.append(("forward_decode", [*body, f"return {g.ret_expr(hs)}"]))
        cls = ["class Backend:"]
        for name, body in methods:
            cls += [f"    def {name}(self, inp, n, k, flag):", *indent(body, "        "), ""]
        main = cls if delegation else [*cls, "", LIFECYCLE_DRIVER]
    else:
        body = prologue() + g.stmt_alloc(hs)
        for _ in range(ch.integer(1, 7)):
            body += g.statement(hs, 0, None, False)
        body.append(f"return {g.ret_expr(hs)}")
        main = ["def f(inp, n, k, flag):", *indent(body)]
    lines = [*header, "", "", PRELUDE, "", *module_extra, *main]
    return Program(source="\n".join(lines) + "\n", tags=frozenset(g.tags))


def random_program(seed: int) -> Program:
    """The seeded plain-random generator: the same seed gives the same program, everywhere."""
    return build_program(RandomChooser(seed))


def programs() -> Any:
    """A hypothesis strategy over the same program model."""
    from hypothesis import strategies as st

    @st.composite
    def _programs(draw: Callable[[Any], Any]) -> Program:
        return build_program(HypothesisChooser(draw))

    return _programs()
