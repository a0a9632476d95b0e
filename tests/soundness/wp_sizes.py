"""Buffers sized by a value of unknown type and filled by a loop over that size
(analysis/dataflow/loop_sizes.py): `torch.zeros(n)` then `for i in range(n)`, `torch.zeros(len(xs))`
then `range(len(xs))` or `enumerate(xs)`, where `n` is an int (0, 1 and more), a 0-d int tensor or
a one-element tensor, and `xs` a list (empty, one item and more). The loop writes `b[i]`,
`b[i, :]` or `b[:, i]`; its near misses write under a condition, stop at `break`, skip at
`continue`, run one short (`range(n - 1)`, `range(1, n)`), or see the size changed between the
allocation and the loop (`n` rebound, `n.sub_(1)`, `m = n; m -= 1`, `xs.pop()`, `del ys[1:]` on an
alias, a helper popping `xs`, a pop inside the `enumerate` loop, in nested loops a change in the
outer body before the inner loop). The reads after the loop are the whole buffer, `b[:k]`, and the
empty views `b[:0]` and `b[k:k]`, alone or together. The twins that change nothing (`b[i - 1]`
over `range(n)`, `n` rebound to its own value, `n.add_(1)` after the loop, an append undone or
a guarded write past the end) must not be `unsafe`.

Each call site of the sized function passes several sizes (the caller's `n`, literals, tensors),
so the variant alone decides whether poisoning the allocation can change the result: with the
whole buffer read, on a size of 3 every near miss leaves a row unwritten on some input
(`flag` false, `k` of 0)."""

from __future__ import annotations

import re

from tests.soundness.wp_blocks import ALLOC_IN_CLASS, Blocks, Buf, Piece, ind

# Loops that write every index once they finish, and leave nothing unwritten on the zero trip.
FULL = ("plain", "index-minus-1", "rebound-same", "add-after", "append-undone", "append-guarded")
# Loops that leave some index unwritten on some input (a size of 3 is always among the calls).
PARTIAL = (
    "cond-flag", "cond-k", "break", "break-after", "continue", "range-short", "range-from-1",
    "index-minus-1-from-1", "rebound-dec", "sub", "alias-sub", "pop", "alias-del", "helper-pop", "pop-in-loop",
)  # fmt: skip
# Only for a size that is an int or tensor (`n`), or only for a list (`xs`).
TENSOR_ONLY = ("sub", "alias-sub", "add-after", "sub-in-outer")
LIST_ONLY = ("pop", "alias-del", "helper-pop", "pop-in-loop", "append-undone", "append-guarded")
VARIANTS = FULL + PARTIAL + ("empty-reads",)


class SizeShapes(Blocks):
    """`shape_sizes`: one sized function per piece (an opt-in whole-program shape)."""

    def shape_sizes(self, u: str, b: Buf) -> Piece:
        kind = self.ch.choice(["range", "range", "len", "enumerate"])
        if self.ch.chance(20):
            return self._grid(u, b, kind)
        layout = self.ch.choice(["flat", "rows", "rows-colon", "cols"])
        allowed = [
            v
            for v in VARIANTS
            if not (kind != "range" and v in TENSOR_ONLY)
            and not (kind == "range" and v in LIST_ONLY)
        ]
        variant = self.ch.choice(allowed)
        if variant == "pop-in-loop" and kind != "enumerate":
            variant = "pop"
        inline = kind == "range" and variant not in TENSOR_ONLY and self.ch.chance(30)
        x = b.name
        size = "n" if kind == "range" else "len(xs)"
        dims = {
            "flat": size,
            "rows": f"{size}, 8",
            "rows-colon": f"{size}, 8",
            "cols": f"8, {size}",
        }
        kw = "" if b.dtype == "float32" else ", dtype=torch.int64"
        alloc = f"{x} = torch.zeros({dims[layout]}{kw})"
        lib: list[str] = []
        names: list[str] = []
        between: list[str] = []
        after: list[str] = []
        if variant == "rebound-dec":
            between = [
                f"{'n' if kind == 'range' else 'xs'} = {'n - 1' if kind == 'range' else 'xs[1:]'}"
            ]
        elif variant == "rebound-same":
            between = ["n = n + 0" if kind == "range" else "xs = list(xs)"]
        elif variant == "sub":
            between = ["n.sub_(1)"]
        elif variant == "alias-sub":
            between = [f"a{u} = n", f"a{u} -= 1"]
        elif variant == "alias-del":
            between = [f"a{u} = xs", f"del a{u}[1:]"]
        elif variant == "add-after":
            after = ["n.add_(1)"]
        elif variant == "pop":
            between = ["if xs:", "    xs.pop()"]
        elif variant == "helper-pop":
            lib = [f"def sh{u}(ys):", "    if ys:", "        ys.pop()"]
            names, between = [f"sh{u}"], [f"sh{u}(xs)"]
        elif variant == "append-undone":
            between = ["xs.append(0.0)", "xs.pop()"]
        elif variant == "append-guarded":
            between = ["xs.append(xs[-1] if xs else 0.0)"]
        loop, index, value = self._loop(kind, layout, variant)
        guard = {
            "cond-flag": "if flag:",
            "cond-k": "if i != k:",
            "append-guarded": f"if i < {x}.shape[{1 if layout == 'cols' else 0}]:",
        }.get(variant)
        write = [f"{x}[{index}] = {value}"]
        body = [f"    {guard}", f"        {write[0]}"] if guard else [f"    {write[0]}"]
        if variant == "break":
            body = ["    if i == k:", "        break", *body]
        elif variant == "continue":
            body = ["    if i == k:", "        continue", *body]
        elif variant == "break-after":
            body = [*body, "    if i == k:", "        break"]
        elif variant == "pop-in-loop":
            body = [*body, "    if i == 0:", "        xs.pop()"]
        reads, differs = self._reads(x, variant)
        fn = [alloc, *between, loop, *body, *after, f"return [{', '.join(reads)}]"]
        tags = {f"wp-sizes-{kind}", f"wp-sizes-{variant}", f"wp-sizes-{layout}"}
        return self._finish(u, kind, (layout, variant), fn, (lib, names), tags, differs, inline)

    def _grid(self, u: str, b: Buf, kind: str) -> Piece:
        """`zeros(s, s)` written by two nested loops over `s`: in full, with the inner loop
        stopped by `break` or a condition, or with the size changed in the outer body before
        the inner loop evaluates it (`n.sub_(1)`, `xs.pop()`)."""
        x = b.name
        size = "n" if kind == "range" else "len(xs)"
        changes = {"range": "sub-in-outer", "len": "pop-in-outer", "enumerate": "pop-in-outer"}
        variant = self.ch.choice(["plain", "break", "cond-flag", changes[kind], "empty-reads"])
        kw = "" if b.dtype == "float32" else ", dtype=torch.int64"
        inner = f"for j in range({size}):"
        value = "i * 0.5 + j" if kind == "range" else "xs[j] * 2 + i"
        if kind == "enumerate":
            inner, value = "for j, y in enumerate(xs):", "y * 2 + i"
        write = [f"{x}[i, j] = {value}"]
        if variant == "break":
            write = ["if j == k:", "    break", *write]
        elif variant == "cond-flag":
            write = ["if flag:", f"    {write[0]}"]
        outer = []
        if variant == "sub-in-outer":
            outer = ["n.sub_(1)"]
        elif variant == "pop-in-outer":
            outer = ["if i == 0 and xs:", "    xs.pop()"]
        loop = [f"for i in range({size}):", *ind([*outer, inner, *ind(write)])]
        reads, differs = self._reads(x, "empty-reads" if variant == "empty-reads" else "cond-flag")
        if variant == "plain":
            differs = False
        fn = [f"{x} = torch.zeros({size}, {size}{kw})", *loop, f"return [{', '.join(reads)}]"]
        tags = {f"wp-sizes-{kind}", f"wp-sizes-{variant}", "wp-sizes-grid"}
        inline = kind == "range" and variant != "sub-in-outer" and self.ch.chance(30)
        return self._finish(u, kind, ("flat", variant), fn, ([], []), tags, differs, inline)

    def _finish(
        self,
        u: str,
        kind: str,
        how: tuple[str, str],
        fn: list[str],
        defs: tuple[list[str], list[str]],
        tags: set[str],
        differs: bool | None,
        inline: bool,
    ) -> Piece:
        """The piece: `fn` (the allocation, the loop, `return` of the reads) in f itself, or as
        a sized function that f calls with several sizes."""
        layout, variant = how
        lib, names = defs
        if inline:
            # In f itself: its parameter `n` (0..3 over the oracle's inputs) is the size, or a
            # local copy of it where the variant rebinds it (the other pieces read `n` too).
            lines = fn[:-1]
            if variant.startswith("rebound"):
                lines = [f"m{u} = n", *[re.sub(r"\bn\b", f"m{u}", line) for line in lines]]
            ret = fn[-1].removeprefix("return ")
            tags.add("wp-sizes-inline")
            return Piece(
                lib, [], [ALLOC_IN_CLASS, *lines, f"out.append({ret})"], names, tags, differs
            )
        params = "n, inp, k, flag" if kind == "range" else "xs, k, flag"
        local = [f"def s{u}({params}):", *ind(fn)]
        calls = [f"out.append(s{u}({a}))" for a in self._arguments(kind, variant, layout)]
        return Piece(lib, local, [ALLOC_IN_CLASS, *calls], names, tags, differs)

    def _some(self, options: list[str], most: int) -> list[str]:
        """Up to `most` of `options`, each at most once, in their order."""
        wanted = self.ch.integer(0, most)
        return [o for o in options if self.ch.chance(50)][:wanted]

    def _loop(self, kind: str, layout: str, variant: str) -> tuple[str, str, str]:
        """(the `for` line, the written index, the written value)."""
        size = "n" if kind == "range" else "len(xs)"
        rng = f"range({size})"
        if variant == "range-short":
            rng = f"range({size} - 1)"
        elif variant in ("range-from-1", "index-minus-1-from-1"):
            rng = f"range(1, {size})"
        i = "i - 1" if variant in ("index-minus-1", "index-minus-1-from-1") else "i"
        index = {"flat": i, "rows": i, "rows-colon": f"{i}, :", "cols": f":, {i}"}[layout]
        if kind == "range":
            value = "i * 0.5 + 1.5" if layout == "flat" else "inp[i % 4] * 0.5"
            return f"for i in {rng}:", index, value
        value = "xs[i] * 2 + 1"
        if kind == "enumerate" and rng == "range(len(xs))":
            return "for i, x in enumerate(xs):", index, "x * 2 + 1"
        return f"for i in {rng}:", index, value

    def _reads(self, x: str, variant: str) -> tuple[list[str], bool | None]:
        """The values returned after the loop, and whether poisoning can change them."""
        empty = [f"{x}[:0].sum()", f"{x}[k:k].clone()"]
        if variant == "empty-reads":
            return self._some(empty, 2) or empty[1:], False
        extra = self._some([f"{x}[:k].clone()", *empty], 2)
        if self.final_now:
            whole = self.ch.choice([f"{x}.sum()", f"{x}.clone()"])
            return [whole, *extra], variant in PARTIAL
        if not any(":k]" in r for r in extra):
            return extra or empty[:1], False
        return extra, None if variant in PARTIAL else False

    def _arguments(self, kind: str, variant: str, layout: str) -> list[str]:
        """The calls' arguments: the caller's `n`, an empty size, a size of one and of three."""
        if kind == "range":
            sizes = ["torch.tensor(n)", "torch.tensor(0)", "torch.tensor([1])", "torch.tensor(3)"]
            if variant not in TENSOR_ONLY:
                sizes = [*self._some(["n", "0", "1", *sizes[:3]], 4), "n", "3"]
            return [f"{s}, inp, k, flag" for s in sizes]
        item = "float(j) + 0.5" if layout == "flat" else "inp[j % 4]"
        three = "[0.5, -1.5, 2.0]" if layout == "flat" else "[inp[0], inp[1], inp[2]]"
        lists = [f"[{item} for j in range(n)]", "[]", f"[{item.replace('j', '3')}]", three]
        return [f"{lst}, k, flag" for lst in lists]
