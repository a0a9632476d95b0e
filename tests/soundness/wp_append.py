"""Lists built by `append`, `extend` and `+=` and read by `torch.cat`/`torch.stack`
(analysis/dataflow/append_lists.py), with the near misses that must not be `safe` (the list read
another way: through an alias, an index, iteration, a helper, a copy) or `unsafe` (the buffer
no longer in the list, or written through it, when the reader runs). Each variant says whether
the list holds the buffer, unwritten, when the reader runs; `mode` then writes the buffer in
full before the reader, in part, or only after it."""

from __future__ import annotations

from tests.soundness.wp_blocks import Blocks, Buf, Piece

# The list holds the buffer when the reader runs (`flag` decides the conditional one).
HELD = ("append", "extend", "augmented", "display-then-append", "conditional-append", "loop")
# The list is read some other way: the same as HELD for the oracle, never `safe` for the rule.
READ_OTHERWISE = ("alias-read", "index-read", "iterated-read", "helper-read", "copy-read")
# The buffer is gone from the list, or written through it, before the reader runs.
GONE = ("replaced", "popped", "cleared", "rebound", "iter-filled", "helper-filled",
        "alias-filled", "index-filled")  # fmt: skip
VARIANTS = HELD + READ_OTHERWISE + GONE


class AppendShapes(Blocks):
    """`shape_appendlists`: one variant of VARIANTS per piece (an opt-in whole-program shape)."""

    def shape_appendlists(self, u: str, b: Buf) -> Piece:
        x, s, c = b.name, f"{b.src}.clone()", self.const(b)
        lst = f"l{u}"
        variant = self.ch.choice(list(VARIANTS))
        reader = self.ch.choice(["torch.cat", "torch.stack"])
        read = f"{reader}({lst})"
        lib: list[str] = []
        names: list[str] = []
        body = [f"{lst} = [{s}]"]
        held = True
        if variant == "extend":
            body.append(f"{lst}.extend([{x}, {s}])")
        elif variant == "augmented":
            body.append(f"{lst} += ({s}, {x})")
        elif variant == "display-then-append":
            body = [f"{lst} = [{x}]", f"{lst}.append({s})"]
        elif variant == "conditional-append":
            body += ["if flag:", f"    {lst}.append({x})"]
        elif variant == "loop":
            body += [f"for i{u} in range(n):", f"    {lst}.append({x})"]
        else:
            body.append(f"{lst}.append({x})")
        if variant == "alias-read":
            body.append(f"m{u} = {lst}")
            read = f"{reader}(m{u})"
        elif variant == "index-read":
            read = f"{lst}[-1]"
        elif variant == "iterated-read":
            read = f"{reader}([t for t in {lst}])"
        elif variant == "copy-read":
            read = f"{reader}({lst}.copy())"
        elif variant == "helper-read":
            lib = [f"def rd{u}(ts):", f"    return {reader}(ts)"]
            names, read = [f"rd{u}"], f"rd{u}({lst})"
        elif variant in GONE:
            held = False
            lib, names, extra = self._gone(variant, u, lst, s, c)
            body += extra
        mode = self.ch.choice(["read-first", "full-first", "part-first"])
        use = f"out.append({read}.float().sum())"
        after = f"{x}.fill_({c})"
        if mode == "read-first" or not held:
            body += [use, after]
        elif mode == "full-first":
            body += [after, use]
        else:
            body += [f"{x}[1:] = {c}", use, after]
        # The list reads the buffer unwritten where it holds it and nothing wrote all of it
        # first (the conditional one and the loop only on some inputs, which the oracle runs);
        # the final read comes after a full write either way.
        differs = held and mode != "full-first"
        return Piece(lib, [], body, names, {f"wp-append-{variant}"}, differs)

    def _gone(
        self, variant: str, u: str, lst: str, s: str, c: str
    ) -> tuple[list[str], list[str], list[str]]:
        """(definitions, their names, statements) that take the buffer out of the list, or
        write it through the list, after it was appended."""
        if variant == "replaced":
            return [], [], [f"{lst}[-1] = {s}"]
        if variant == "popped":
            return [], [], [f"{lst}.pop()"]
        if variant == "cleared":
            return [], [], [f"{lst}.clear()", f"{lst}.append({s})"]
        if variant == "rebound":
            return [], [], [f"{lst} = [{s}]"]
        if variant == "iter-filled":
            return [], [], [f"for t{u} in {lst}:", f"    t{u}.fill_({c})"]
        if variant == "helper-filled":
            return (
                [f"def fl{u}(ts):", "    for t in ts:", f"        t.fill_({c})"],
                [f"fl{u}"],
                [f"fl{u}({lst})"],
            )
        if variant == "alias-filled":
            return [], [], [f"m{u} = {lst}", f"m{u}[-1].fill_({c})"]
        return [], [], [f"{lst}[-1].fill_({c})"]  # index-filled
