"""The program model the random generators share: where every decision comes from (a `Chooser`),
the names a program holds (`Handle`), the program (`Program`), the inputs it runs on (`INPUTS`,
`make_inp`), the module prelude, and the generator's state with the expressions every family of
statements builds on (`GenState`). The families are gen_writes.py, gen_uses.py, gen_traps.py;
generator.py puts them together.
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


class GenState:
    """What one program being generated holds, and the expressions its statements use."""

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

    def _tagged(self, option: Callable[[], list[str]], tag: str) -> Callable[[], list[str]]:
        def chosen() -> list[str]:
            self.tags.add(tag)
            return option()

        return chosen
