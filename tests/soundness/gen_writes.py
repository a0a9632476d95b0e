"""Statements of the random generator that write a buffer: allocations (biased to be filled at
once), full writes in every spelling the analysis claims to prove, loops over every index and
their near misses, partial writes, writes through views, and advanced-indexing copies.
"""

from __future__ import annotations

from collections.abc import Callable

from tests.soundness.gen_model import COLS, DTYPES, ROWS, GenState, Handle


class Writes(GenState):
    """Allocations and writes: each returns lines relative to the current indentation."""

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
