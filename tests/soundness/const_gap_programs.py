"""Generated programs whose writes leave a constant part of a buffer alone (literal slices:
`b[1:]`, `b[:-1]`, `b[2:5]`, `b[:, 0]`, `out=b[1:]`), then read it whole, through a view, or
one element at a time (analysis/dataflow/const_gaps.py).

Same program model as generator.py (`f(inp, n, k, flag)` over gen_model.py's INPUTS: n is 0..3, k is 0..8).
The near misses are drawn on purpose: sizes that may be 0 (`zeros(n)`) or too small for the
position (`n + 1` columns for column 1), a later full write, writes in a loop the allocation is
not in (or one that covers every position), writes in a branch, `out=` views PyTorch may grow,
bounds that are names, and reads of only the written part.
"""

from __future__ import annotations

from tests.soundness.gen_model import Program, RandomChooser

SIZES = ("n + 1", "n + 2", "n", "k + 1", "4", "1", "2", "n + k + 2", "inp.shape[1] + 1")
SLICES = ("1:", "2:", ":-1", ":-2", "1:-1", "2:5", "0", "1", "-1", "k:", ":k", "1:k", "3")
READS = ("", "0", "-1", "1", ":-1", "1:", "-1:", "2:", ":1", "-2")


def _write(ch: RandomChooser, b: str, lead: str, tags: set[str]) -> str:
    sl = ch.choice(SLICES)
    kind = ch.choice(["store", "store", "store", "out", "fill"])
    if kind == "out" and not lead:
        tags.add("cg-out")
        length = ch.choice([f"{b}[{sl}].shape", f"{b}.shape", "(2,)"])
        return f"torch.cumsum(torch.ones({length}), 0, out={b}[{sl}])"
    if kind == "fill":
        tags.add("cg-fill-view")
        return f"{b}[{lead}{sl}].fill_(1.5)"
    tags.add("cg-store")
    return f"{b}[{lead}{sl}] = {ch.choice(['1.5', 'inp[0, 0] + 2', '-3.0'])}"


def _read(ch: RandomChooser, b: str, lead: str, tags: set[str]) -> str:
    r = ch.choice(READS)
    tags.add("cg-read-whole" if not r else "cg-read-part")
    view = b if not r else f"{b}[{lead}{r}]"
    how = ch.choice(["{v}.sum()", "({v} * 2).sum()", "torch.cat([{v}.reshape(-1), inp[0]]).sum()"])
    return f"acc = acc + {how.format(v=view)}"


def _near(ch: RandomChooser, b: str, lead: str, tags: set[str]) -> list[str]:
    kind = ch.choice(["full", "loop", "cover", "branch", "none", "none", "none"])
    if kind != "none":
        tags.add(f"cg-{kind}")
    if kind == "full":
        return [ch.choice([f"{b}.fill_(2.0)", f"{b}[:] = 3.0", f"{b}.copy_(torch.ones_like({b}))"])]
    if kind == "loop":
        return ["for i in range(n):", f"    {_write(ch, b, lead, tags)}"]
    if kind == "cover":
        dim = "1" if lead else "0"
        return [f"for i in range({b}.shape[{dim}]):", f"    {b}[{lead}i] = 0.5"]
    if kind == "branch":
        return ["if flag:", f"    {_write(ch, b, lead, tags)}"]
    return []


def random_const_gap_program(seed: int) -> Program:
    ch = RandomChooser(seed)
    tags: set[str] = set()
    body = ["acc = inp.sum() * 0"]
    returned: list[str] = []
    for j in range(ch.integer(1, 2)):
        b = f"b{j}"
        two = ch.chance(40)
        lead = ":, " if two and ch.chance(50) else ""
        size = ch.choice(SIZES)
        shape = (
            f"({ch.choice(SIZES)}, {size})"
            if lead
            else (f"({size}, {ch.choice(SIZES)})" if two else f"({size},)")
        )
        in_loop = ch.chance(15)
        pad = "    " if in_loop else ""
        block = [f"{b} = torch.zeros({shape})"]
        for _ in range(ch.integer(1, 2)):
            block.append(_write(ch, b, lead, tags))
        if ch.chance(40):
            block += _near(ch, b, lead, tags)
        for _ in range(ch.integer(1, 2)):
            block.append(_read(ch, b, lead, tags))
        if in_loop:
            tags.add("cg-alloc-in-loop")
            body.append("for it in range(2):")
        body += [pad + s for s in block]
        if not in_loop and ch.chance(20):
            returned.append(b)
    body.append(f"return ({', '.join(['acc', *returned])},)")
    source = "import torch\n\n\ndef f(inp, n, k, flag):\n" + "".join(f"    {s}\n" for s in body)
    return Program(source=source, tags=frozenset(tags | {"const-gaps"}))
