"""Building blocks of the whole-program shapes (tests/soundness/whole_program.py): a piece (one
buffer and what it crosses), the buffer, and the statements that write it in full, in part, or
read it, from which each shape is made."""

from __future__ import annotations

from dataclasses import dataclass

from tests.soundness.gen_model import Chooser


@dataclass
class Piece:
    lib: list[str]  # module-level definitions that may live in another module
    local: list[str]  # module-level definitions that stay beside f (their methods allocate)
    body: list[str]  # statements of f
    names: list[str]  # names `lib` binds that `body` or `local` use
    tags: set[str]
    differs: bool | None
    buffer: str = ""  # the allocated buffer's name (set by `_WP.piece`)


@dataclass
class Buf:
    name: str
    shape: tuple[int, ...]
    dtype: str  # "float32" | "int64"

    @property
    def src(self) -> str:
        """A tensor of the buffer's shape and dtype, independent of any buffer."""
        base = "inp" if len(self.shape) == 2 else "inp[1]"
        return f"({base} * 2 + 1)" if self.dtype == "float32" else f"({base} * 10).long()"


ALLOC_IN_CLASS = "<allocation inside a class>"  # marks a piece whose allocation is in `local`


def ind(lines: list[str], levels: int = 1) -> list[str]:
    return [("    " * levels + line) if line else line for line in lines]


class Blocks:
    """Random choices of buffers and of statements over them; shapes build on these."""

    def __init__(self, ch: Chooser, final_read: bool | None = None) -> None:
        self.ch = ch
        self.counter = 0
        self.final_read = final_read  # None: chosen per piece
        self.final_now = True
        self.use = "full"  # the last use_field's choice

    # ---- building blocks -----------------------------------------------------------------------

    def fresh(self) -> str:
        self.counter += 1
        return str(self.counter)

    def buf(self, u: str) -> Buf:
        shape = self.ch.choice([(4, 8), (8,)])
        dtype = "int64" if self.ch.chance(20) else "float32"
        return Buf(f"b{u}", shape, dtype)

    def alloc(self, b: Buf) -> str:
        dims = ", ".join(map(str, b.shape))
        like = "inp" if len(b.shape) == 2 else "inp[1]"
        kw = "" if b.dtype == "float32" else ", dtype=torch.int64"
        return self.ch.choice(
            [
                f"torch.zeros({dims}{kw})",
                f"torch.zeros(({dims},){kw})"
                if len(b.shape) == 1
                else f"torch.zeros(({dims}){kw})",
                f"torch.zeros_like({like}{kw})",
                f"{like}.new_zeros(({dims}{',' if len(b.shape) == 1 else ''}){kw})",
            ]
        )

    def const(self, b: Buf) -> str:
        return self.ch.choice(["2.5", "-1.5", "4.0"] if b.dtype == "float32" else ["7", "-3"])

    def full(self, t: str, b: Buf) -> list[str]:
        """Statements writing every element of `t` (a parameter of b's shape)."""
        c = self.const(b)
        return self.ch.choice(
            [
                [f"{t}.fill_({c})"],
                [f"{t}[:] = {c}"],
                [f"{t}[...] = {c}"],
                [f"{t}.copy_(torch.full_like({t}, {c}))"],
                [f"for j in range({t}.shape[0]):", f"    {t}[j] = {c}"],
            ]
        )

    def part(self, t: str, b: Buf) -> list[str]:
        """Statements writing some elements of `t`, never all."""
        c = self.const(b)
        return self.ch.choice(
            [
                [f"{t}[1:] = {c}"],
                [f"{t}[0] = {c}"],
                [f"{t}[::2] = {c}"],
                [f"{t}[: {t}.shape[0] - 1] = {c}"],
                [f"{t}.narrow(0, 0, 1).fill_({c})"],
            ]
        )

    def read(self, t: str) -> str:
        return self.ch.choice([f"{t}.float().sum()", f"{t}.float().amax()", f"{t}.clone()"])

    def leaf(self, kind: str, name: str, b: Buf) -> list[str]:
        """`def name(t)` that writes t in full, in part, or reads it first."""
        if kind == "full":
            return [f"def {name}(t):", *ind(self.full("t", b))]
        if kind == "part":
            return [f"def {name}(t):", *ind(self.part("t", b))]
        return [
            f"def {name}(t):",
            f"    s = {self.read('t')}",
            *ind(self.full("t", b)),
            "    return s",
        ]

    # ---- a piece -------------------------------------------------------------------------------
