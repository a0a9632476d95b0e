"""Generated programs whose zeros buffers cross function, method and object boundaries.

Each program defines `f(inp, n, k, flag)` (the oracle's entry point, as in generator.py) made of
one to three *pieces*. A piece allocates one buffer and hands it across a boundary the per-file
analysis used to stop at: a helper that writes it in full, in part, reads it first, writes then
raises, writes under a flag, returns it, stashes it in a global or a list, calls another helper
(chains of two or three) or itself; the same buffer or a view passed twice, a view or a holder
passed; keyword, default, `*args` and `**kwargs` arguments; a decorator that calls twice, swaps
arguments or never calls; a generator or coroutine whose body does not run at the call; a method
`self.m(buf)` overridden by a subclass whose instance is the one used, `cls` and `staticmethod`
dispatch; dataclass constructors and their fields; SimpleNamespace, dict, list and tuple holders.
Every piece comes with its near-misses: a summary that is right for one of them and applied to
its twin is wrong, and the oracle sees it.

A piece's `differs` says whether, with the final full read of the buffer, poisoning the
allocation must change the result on some input (True), never can (False), or is not known
(None, when the final read is left out): tests check that the oracle agrees, so every shape keeps
its meaning. Pieces carry tags `wp-<shape>` (and `wp-<family>`) for recall by construct.

`random_wp_program(seed)` gives one module; `random_wp_multimodule_program(seed)` moves the
helpers, decorators, base classes and dataclasses to `lib.py` of a package and imports them back
in the main module by a star import, explicit imports, a re-export chain (`mid.py` star-imports
or names them), or a qualified `lib.name`. Allocations and the classes whose methods allocate stay
in the main module (the oracle poisons the main module's sites).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from tests.soundness.gen_model import Chooser, Program, RandomChooser
from tests.soundness.multimodule import MultiProgram, namespace_layout
from tests.soundness.wp_anyorder import AnyOrderShapes
from tests.soundness.wp_append import AppendShapes
from tests.soundness.wp_blocks import ALLOC_IN_CLASS, Buf, Piece, ind
from tests.soundness.wp_dispatch import DispatchShapes
from tests.soundness.wp_holders import HolderShapes
from tests.soundness.wp_partial import PartialShapes
from tests.soundness.wp_producer import ProducerShapes
from tests.soundness.wp_returned import ReturnedShapes, main_import
from tests.soundness.wp_sizes import SizeShapes

HEADER = [
    "import contextlib",
    "import dataclasses",
    "import functools",
    "import types",
    "from dataclasses import dataclass",
    "",
    "import torch",
]


SHAPES = (
    "helper", "alias", "args", "decorated", "generator", "method", "selfcall", "dataclass",
    "holder", "dispatch",
)  # fmt: skip
# Helpers and `self.put` have the most variants (and carry summaries and method resolution):
# drawn more often, so that each variant gets enough sites in a run of a thousand programs.
DRAWN = ("helper", "helper", "helper", "selfcall", "selfcall", *SHAPES[1:])
# Drawn only when named (`--wp-shapes returned`, `--wp-shapes holders`): the default mix, and so
# every documented seed, stays as it was.
OPT_IN_SHAPES = (
    "returned", "holders", "anyorder", "partial", "factory", "appendlists", "sizes", "producer",
)  # fmt: skip


class _WP(
    HolderShapes,
    ReturnedShapes,
    DispatchShapes,
    AnyOrderShapes,
    PartialShapes,
    AppendShapes,
    SizeShapes,
    ProducerShapes,
):
    """Every shape: the helper, argument, decorator and generator ones here, the others inherited."""

    def piece(self, shape: str | None = None) -> Piece:
        u = self.fresh()
        b = self.buf(u)
        final = self.ch.chance(85) if self.final_read is None else self.final_read
        self.final_now = final
        shape = shape or self.ch.choice(DRAWN)
        make: Callable[[str, Buf], Piece] = getattr(self, f"shape_{shape}")
        p = make(u, b)
        p.tags.add(f"wp-{shape}")
        p.buffer = b.name
        if p.body and p.body[0] == ALLOC_IN_CLASS:
            p.body = p.body[1:]
            return p
        p.body = [f"{b.name} = {self.alloc(b)}", *p.body]
        if final:
            p.body.append(f"out.append({b.name}.clone())")
        elif p.differs:
            p.differs = None  # without the final read, a difference may stay unobserved
        return p

    # -- helpers: full / part / read-first / raise / flag / return / stash / chain / recursion --

    def shape_helper(self, u: str, b: Buf) -> Piece:
        kind = self.ch.choice(
            [
                "full",
                "part",
                "read-first",
                "raise",
                "flag",
                "return",
                "stash",
                "chain",
                "recursion",
                "body",
                "rebound",
            ]
        )
        x, h = b.name, f"h{u}"
        tags = {f"wp-helper-{kind}"}
        if kind in ("full", "part"):
            return Piece(self.leaf(kind, h, b), [], [f"{h}({x})"], [h], tags, kind == "part")
        if kind == "read-first":
            used = self.ch.chance(70)
            if not used:
                tags.add("wp-read-discarded")
            call = f"out.append({h}({x}))" if used else f"{h}({x})"
            return Piece(self.leaf("read", h, b), [], [call], [h], tags, used)
        if kind == "raise":
            c = self.const(b)
            variant = self.ch.choice(["after", "after-flag", "before-flag", "before"])
            lines = {
                "after": [*self.full("t", b), "raise ValueError('after')"],
                "after-flag": [*self.full("t", b), "if on:", "    raise ValueError('after')"],
                "before-flag": ["if on:", "    raise ValueError('before')", f"t.fill_({c})"],
                "before": ["if t.dim() > 0:", "    raise ValueError('before')", f"t.fill_({c})"],
            }[variant]
            tags.add(f"wp-raise-{variant}")
            defs = [f"def {h}(t, on):", *ind(lines)]
            body = ["try:", f"    {h}({x}, flag)", "except ValueError:", "    out.append(-1)"]
            return Piece(defs, [], body, [h], tags, variant.startswith("before"))
        if kind == "flag":
            default = self.ch.choice(["False", "True"])
            defs = [f"def {h}(t, on={default}):", "    if on:", *ind(self.full("t", b), 2)]
            call, differs = self.ch.choice(
                [
                    (f"{h}({x}, flag)", True),
                    (f"{h}({x}, True)", False),
                    (f"{h}({x}, on=not flag)", True),
                    (f"{h}({x})", default == "False"),
                ]
            )
            return Piece(defs, [], [call], [h], tags, differs)
        if kind == "return":
            ret, full_alias = self.ch.choice(
                [
                    ("t", True),
                    ("t.view(-1)", True),
                    ("t.clone()", False),
                    ("t[1:]", False),
                    ("t if on else t.clone()", False),
                    ("t.contiguous()", True),
                ]
            )
            defs = [f"def {h}(t, on=True):", f"    return {ret}"]
            arg = f"{x}, flag" if "on" in ret else x
            write = self.ch.choice([f"{h}({arg}).fill_({self.const(b)})", f"{h}({arg})[...] = 1"])
            tags.add("wp-return-alias" if full_alias else "wp-return-copy")
            return Piece(defs, [], [write], [h], tags, not full_alias)
        if kind == "body":
            return self.body_traps(u, b, tags)
        if kind == "rebound":
            return self.rebound(u, b, tags)
        if kind == "stash":
            return self.stash(u, b, tags)
        if kind == "chain":
            return self.chain(u, b, tags)
        return self.recursion(u, b, tags)

    def body_traps(self, u: str, b: Buf, tags: set[str]) -> Piece:
        """Helpers whose body looks like a full write of the parameter and is not always one."""
        h, x = f"h{u}", b.name
        write = self.full("t", b)
        variant = self.ch.choice(
            [
                "rebind",
                "rebind-empty",
                "zero-trip",
                "one-trip",
                "early-return",
                "nested-unused",
                "nested-called",
                "out-kwarg",
                "other-param",
                "try-swallow",
                "finally",
                "suppress",
            ]
        )
        tags.add(f"wp-body-{variant}")
        params, args, differs = "t", x, True
        if variant == "rebind":
            lines = ["t = t.clone()", *write]
        elif variant == "rebind-empty":
            lines = ["t = torch.empty_like(t)", *write, "return t"]
        elif variant in ("zero-trip", "one-trip"):
            bound = "d" if variant == "zero-trip" else "d + 1"
            lines = [f"for _ in range({bound}):", *ind(write)]
            params, args, differs = "t, d", f"{x}, n", variant == "zero-trip"
        elif variant == "early-return":
            lines = ["if not on:", "    return", *write]
            params = "t, on"
            args, differs = self.ch.choice([(f"{x}, flag", True), (f"{x}, True", False)])
        elif variant in ("nested-unused", "nested-called"):
            lines = ["def inner():", *ind(write)]
            lines += ["inner()"] if variant == "nested-called" else ["return inner"]
            differs = variant == "nested-unused"
        elif variant == "try-swallow":  # copy_ of k rows raises unless k broadcasts or fits
            src = "torch.ones_like(t)[:d]"
            lines = ["try:", f"    t.copy_({src})", "except RuntimeError:", "    pass"]
            params, args = "t, d", f"{x}, k"
        elif variant in ("finally", "suppress"):
            c = self.const(b)
            if variant == "finally":
                lines = [
                    "try:",
                    "    if on:",
                    "        raise ValueError",
                    "finally:",
                    f"    t.fill_({c})",
                ]
            else:
                lines = ["with contextlib.suppress(ValueError):", "    if on:",
                         "        raise ValueError", f"    t.fill_({c})"]  # fmt: skip
            params, args, differs = "t, on", f"{x}, flag", variant == "suppress"
            defs = [f"def {h}({params}):", *ind(lines)]
            body = ["try:", f"    {h}({args})", "except ValueError:", "    out.append(-1)"]
            return Piece(defs, [], body, [h], tags, differs)
        elif variant == "out-kwarg":
            lines = ["torch.add(torch.ones_like(t), 1, out=t)"]
            differs = False
        else:
            lines = [f"u.fill_({self.const(b)})"]
            params, args = "t, u", f"{x}, {b.src}.clone()"
        defs = [f"def {h}({params}):", *ind(lines)]
        return Piece(defs, [], [f"{h}({args})"], [h], tags, differs)

    def rebound(self, u: str, b: Buf, tags: set[str]) -> Piece:
        """A writing helper whose name is bound again (a second def, an assignment, a local in
        f): the call runs the last binding, which reads."""
        h, x = f"h{u}", b.name
        writer = self.leaf("full", h, b)
        reader = [f"def {h}_r(t):", "    return t.float().sum()"]
        variant = self.ch.choice(["redef", "assigned", "assigned-back", "local"])
        tags.add(f"wp-rebound-{variant}")
        if variant == "redef":
            defs = [*writer, "", "", f"def {h}(t):", "    return t.float().sum()"]
            return Piece(defs, [], [f"{h}({x})"], [h], tags, True)
        if variant in ("assigned", "assigned-back"):
            back = [f"{h} = {h}_w"] if variant == "assigned-back" else []
            defs = [*writer, "", "", *reader, "", "", f"{h}_w = {h}", f"{h} = {h}_r", *back]
            return Piece(defs, [], [f"{h}({x})"], [h], tags, variant == "assigned")
        body = [f"{h} = {h}_r if flag else {h}_w", f"{h}({x})"]
        defs = [*writer, "", "", *reader, "", "", f"{h}_w = {h}"]
        return Piece(defs, [], body, [f"{h}_r", f"{h}_w"], tags, True)

    def stash(self, u: str, b: Buf, tags: set[str]) -> Piece:
        x, keep, kept = b.name, f"keep{u}", f"kept{u}"
        where = self.ch.choice(["list", "global", "arg-list"])
        tags.add(f"wp-stash-{where}")
        if where == "list":
            defs = [f"STASH{u} = []", "", "", f"def {keep}(t):", f"    STASH{u}.append(t)"]
            defs += ["", "", f"def {kept}():", f"    return STASH{u}[-1]"]
        elif where == "global":
            defs = [f"G{u} = None", "", "", f"def {keep}(t):", f"    global G{u}", f"    G{u} = t"]
            defs += ["", "", f"def {kept}():", f"    return G{u}"]
        else:
            defs = [f"def {keep}(lst, t):", "    lst.append(t)"]
        names = [keep] if where == "arg-list" else [keep, kept]
        body = [f"lst{u} = []", f"{keep}(lst{u}, {x})"] if where == "arg-list" else [f"{keep}({x})"]
        got = f"lst{u}[-1]" if where == "arg-list" else f"{kept}()"
        c = self.const(b)
        order, differs = self.ch.choice(
            [
                ("read-then-write", True),
                ("write-then-read", False),
                ("write-via", False),
                ("part-via", True),
            ]
        )
        tags.add(f"wp-stash-{order}")
        body += {
            "read-then-write": [f"out.append({got}.float().sum())", f"{x}.fill_({c})"],
            "write-then-read": [f"{x}.fill_({c})", f"out.append({got}.float().sum())"],
            "write-via": [f"{got}.fill_({c})"],
            "part-via": [f"{got}[1:] = {c}"],
        }[order]
        return Piece(defs, [], body, names, tags, differs)

    def chain(self, u: str, b: Buf, tags: set[str]) -> Piece:
        depth = self.ch.integer(2, 3)
        leaf = self.ch.choice(["full", "part", "read"])
        names = [f"h{u}_{i}" for i in range(depth)]
        defs = self.leaf(leaf, names[-1], b)
        whole = True  # every level passes all of b on, uncopied
        for i in range(depth - 2, -1, -1):
            arg = self.ch.choice(["t", "t", "t.view(-1)", "t[1:]", "t.clone()"])
            whole = whole and arg in ("t", "t.view(-1)")
            tags.add(
                "wp-chain-copy"
                if arg == "t.clone()"
                else "wp-chain-view"
                if arg == "t[1:]"
                else "wp-chain-pass"
            )
            ret = "return " if leaf == "read" else ""
            defs = [f"def {names[i]}(t):", f"    {ret}{names[i + 1]}({arg})", "", "", *defs]
        tags.add(f"wp-chain-{depth}")
        call = f"out.append({names[0]}({b.name}))" if leaf == "read" else f"{names[0]}({b.name})"
        return Piece(defs, [], [call], [names[0]], tags, leaf != "full" or not whole)

    def recursion(self, u: str, b: Buf, tags: set[str]) -> Piece:
        h, x, c = f"h{u}", b.name, self.const(b)
        variant = self.ch.choice(["base-writes", "row-each", "row-n", "mutual"])
        tags.add(f"wp-recursion-{variant}")
        if variant == "base-writes":
            defs = [
                f"def {h}(t, d):",
                "    if d <= 0:",
                *ind(self.full("t", b), 2),
                "        return",
                f"    {h}(t, d - 1)",
            ]
            return Piece(defs, [], [f"{h}({x}, n)"], [h], tags, False)
        if variant in ("row-each", "row-n"):
            defs = [
                f"def {h}(t, d):",
                "    if d <= 0:",
                "        return",
                f"    t[d - 1] = {c}",
                f"    {h}(t, d - 1)",
            ]
            bound = f"{x}.shape[0]" if variant == "row-each" else "n"
            return Piece(defs, [], [f"{h}({x}, {bound})"], [h], tags, variant == "row-n")
        # mutual recursion: even steps write the first row, odd ones the rest
        defs = [
            f"def {h}_even(t, d):",
            "    if d <= 0:",
            "        return",
            f"    t[0] = {c}",
            f"    {h}_odd(t, d - 1)",
            "",
            "",
            f"def {h}_odd(t, d):",
            "    if d <= 0:",
            "        return",
            f"    t[1:] = {c}",
            f"    {h}_even(t, d - 1)",
        ]
        return Piece(defs, [], [f"{h}_even({x}, n)"], [f"{h}_even"], tags, True)

    # -- aliasing: the same buffer twice, a view, a holder ---------------------------------------

    def shape_alias(self, u: str, b: Buf) -> Piece:
        h, x, c = f"h{u}", b.name, self.const(b)
        variant = self.ch.choice(["same-read", "same-write-first", "view", "two-views", "holder"])
        tags = {f"wp-alias-{variant}"}
        if variant == "same-read":
            defs = [f"def {h}(dst, src):", "    dst.copy_(src * 2 + 1)"]
            return Piece(defs, [], [f"{h}({x}, {x})"], [h], tags, True)
        if variant == "same-write-first":
            defs = [f"def {h}(dst, src):", f"    dst.fill_({c})", "    return src.float().sum()"]
            return Piece(defs, [], [f"out.append({h}({x}, {x}))"], [h], tags, False)
        if variant == "view":
            view, whole = self.ch.choice(
                [
                    (f"{x}[1:]", False),
                    (f"{x}.view(-1)", True),
                    (f"{x}[::2]", False),
                    (f"{x}.reshape(-1)", True),
                    (f"{x}[:]", True),
                    (f"{x}.contiguous()", True),  # itself when already contiguous
                    (f"{x}.detach()", True),
                    (f"{x}.float()", b.dtype == "float32"),  # a copy only for another dtype
                    (f"{x}.clone()", False),
                ]
            )
            if len(b.shape) == 2:
                view, whole = self.ch.choice(
                    [
                        (view, whole),
                        (f"{x}.t()", True),
                        (f"{x}[:, :4]", False),
                        (f"{x}.t().contiguous()", False),
                    ]
                )
            return Piece(self.leaf("full", h, b), [], [f"{h}({view})"], [h], tags, not whole)
        if variant == "two-views":
            defs = [f"def {h}(a, z):", f"    a.fill_({c})", f"    z.fill_({c})"]
            call, whole = self.ch.choice(
                [
                    (f"{h}({x}[:2], {x}[2:])", True),
                    (f"{h}({x}[:2], {x}[3:])", False),
                    (f"{h}({x}[1:], {x}[:1])", True),
                ]
            )
            return Piece(defs, [], [call], [h], tags, not whole)
        other = f"{b.src}.clone()"
        form = self.ch.choice(["index", "loop", "replace", "dict", "tuple-other"])
        tags.add(f"wp-holder-{form}")
        defs, arg, differs = {
            "index": ([f"def {h}(lst):", f"    lst[0].fill_({c})"], f"[{x}]", False),
            "loop": (
                [f"def {h}(lst):", "    for t in lst:", f"        t.fill_({c})"],
                f"[{other}, {x}]",
                False,
            ),
            "replace": (
                [
                    f"def {h}(lst):",
                    "    lst[0] = torch.ones_like(lst[0])",
                    f"    lst[0].fill_({c})",
                ],
                f"[{x}]",
                True,
            ),
            "dict": ([f"def {h}(d):", f"    d['t'].fill_({c})"], f"{{'t': {x}}}", False),
            "tuple-other": ([f"def {h}(p):", f"    p[0].fill_({c})"], f"({other}, {x})", True),
        }[form]
        return Piece(defs, [], [f"{h}({arg})"], [h], tags, differs)

    # -- arguments: keywords, defaults, *args, **kwargs, partial ---------------------------------

    def shape_args(self, u: str, b: Buf) -> Piece:
        h, x, c, s = f"h{u}", b.name, self.const(b), f"{b.src}.clone()"
        variant = self.ch.choice(
            ["keyword", "default", "star", "kwargs", "forward", "partial", "kwonly", "posonly"]
        )
        tags = {f"wp-args-{variant}"}
        if variant == "keyword":
            order = self.ch.choice(["dst, src", "src, dst"])
            defs = [f"def {h}({order}):", "    dst.copy_(src)"]
            call, differs = self.ch.choice(
                [
                    (f"{h}(dst={x}, src={s})", False),
                    (f"{h}(src={s}, dst={x})", False),
                    (f"{h}({x}, {s})", order != "dst, src"),
                    (f"{h}({s}, {x})", order == "dst, src"),
                    (f"{h}({x}, src={s})" if order == "dst, src" else f"{h}({s}, dst={x})", False),
                ]
            )
            return Piece(defs, [], [call], [h], tags, differs)
        if variant == "kwonly":
            defs = [f"def {h}(src=None, *, dst):", f"    dst.fill_({c})"]
            call, differs = self.ch.choice([(f"{h}(dst={x})", False), (f"{h}({x}, dst={s})", True)])
            return Piece(defs, [], [call], [h], tags, differs)
        if variant == "posonly":  # a keyword named like a positional-only parameter goes to **kw
            defs = [f"def {h}(t, /, **kw):", f"    t.fill_({c})"]
            call, differs = self.ch.choice([(f"{h}({x})", False), (f"{h}({s}, t={x})", True)])
            return Piece(defs, [], [call], [h], tags, differs)
        if variant == "default":
            defs = [f"def {h}(t, value={c}, upto=None):", "    t[:upto] = value"]
            call, differs = self.ch.choice(
                [
                    (f"{h}({x})", False),
                    (f"{h}({x}, upto=k)", True),
                    (f"{h}({x}, 1, 2)", True),
                    (f"{h}({x}, upto=None)", False),
                    (f"{h}({x}, upto=-1)", True),
                ]
            )
            return Piece(defs, [], [call], [h], tags, differs)
        if variant == "star":
            body, first_only = self.ch.choice(
                [
                    (["for t in ts:", f"    t.fill_({c})"], False),
                    ([f"ts[0].fill_({c})"], True),
                    ([f"ts[-1].fill_({c})"], None),
                ]
            )
            defs = [f"def {h}(*ts):", *ind(body)]
            lead = self.ch.chance(50)
            call = f"{h}({s}, {x})" if lead else f"{h}({x}, {s})"
            differs = (first_only is True and lead) or (first_only is None and not lead)
            if self.ch.chance(30):
                call = f"{h}(*[{x}])" if first_only is not None else f"{h}(*({x},))"
                differs = False
            return Piece(defs, [], [call], [h], tags, differs)
        if variant == "kwargs":
            defs = [f"def {h}(**kw):", f"    kw['out'].fill_({c})"]
            call, differs = self.ch.choice(
                [
                    (f"{h}(out={x})", False),
                    (f"{h}(out={s}, extra={x})", True),
                    (f"{h}(**{{'out': {x}}})", False),
                ]
            )
            return Piece(defs, [], [call], [h], tags, differs)
        if variant == "forward":
            kind = self.ch.choice(["full", "part"])
            leaf = self.leaf(kind, f"{h}_leaf", b)
            differs = kind == "part"
            fwd, call, drops = self.ch.choice(
                [
                    (f"{h}_leaf(*a, **kw)", f"{h}({x})", False),
                    (f"{h}_leaf(*a[1:], **kw)", f"{h}({x}, {s})", True),
                    (f"{h}_leaf(*a[1:], **kw)", f"{h}({s}, {x})", False),
                    (f"{h}_leaf(**kw)", f"{h}(t={x})", False),
                ]
            )
            defs = [*leaf, "", "", f"def {h}(*a, **kw):", f"    return {fwd}"]
            return Piece(defs, [], [call], [h], tags, differs or drops)
        defs = [f"def {h}(t, value, upto=None):", "    t[:upto] = value"]
        bound, differs = self.ch.choice([("None", False), ("1", True)])
        body = [f"p{u} = functools.partial({h}, value={c}, upto={bound})", f"p{u}({x})"]
        return Piece(defs, [], body, [h], tags, differs)

    # -- decorators ------------------------------------------------------------------------------

    def shape_decorated(self, u: str, b: Buf) -> Piece:
        h, x, d, s = f"h{u}", b.name, f"deco{u}", f"{b.src}.clone()"
        variant = self.ch.choice(["twice", "swap", "skip", "wraps", "flag-only"])
        tags = {f"wp-decorator-{variant}"}
        wrapper = {
            "twice": ["def w(*a, **kw):", "    fn(*a, **kw)", "    return fn(*a, **kw)"],
            "swap": ["def w(a, z):", "    return fn(z, a)"],
            "skip": ["def w(*a, **kw):", "    return None"],
            "wraps": ["@functools.wraps(fn)", "def w(*a, **kw):", "    return fn(*a, **kw)"],
            "flag-only": ["def w(*a, **kw):", "    if a[-1]:", "        return fn(*a[:-1])"],
        }[variant]
        deco = [f"def {d}(fn):", *ind(wrapper), "    return w"]
        if variant == "swap":
            leaf = [f"def {h}(dst, src):", "    dst.copy_(src)"]
            call, differs = self.ch.choice([(f"{h}({x}, {s})", True), (f"{h}({s}, {x})", False)])
        else:
            kind = self.ch.choice(["full", "full", "part", "read"])
            leaf = self.leaf(kind, h, b)
            if variant == "twice" and kind == "full" and self.ch.chance(50):
                leaf = [f"def {h}(t):", "    t.add_(1)"] if b.dtype == "float32" else leaf
            rmw = leaf[1].endswith("add_(1)")
            args = f"{x}, flag" if variant == "flag-only" else x
            call = f"out.append({h}({args}))" if kind == "read" else f"{h}({args})"
            differs = kind != "full" or rmw or variant in ("skip", "flag-only")
            if kind == "read" and variant == "twice":
                differs = False  # the value returned is the second call's, read after a write
        defs = [*deco, "", "", f"@{d}", *leaf]
        return Piece(defs, [], [call], [h], tags, differs)

    # -- generators and coroutines ---------------------------------------------------------------

    def shape_generator(self, u: str, b: Buf) -> Piece:
        h, x = f"h{u}", b.name
        write_first = self.ch.chance(70)
        writes = self.full("t", b)
        body = [*writes, "yield t"] if write_first else ["yield t", *writes]
        variant = self.ch.choice(["call-only", "next", "list", "for-break", "coroutine"])
        tags = {f"wp-generator-{variant}"}
        if variant == "coroutine":
            defs = [f"async def {h}(t):", *ind(writes)]
            body_lines = [f"c{u} = {h}({x})", f"c{u}.close()"]
            return Piece(defs, [], body_lines, [h], tags, True)
        defs = [f"def {h}(t):", *ind(body)]
        call = {
            "call-only": f"{h}({x})",
            "next": f"next({h}({x}))",
            "list": f"list({h}({x}))",
            "for-break": f"for _ in {h}({x}):\n    break",
        }[variant]
        runs = variant == "list" or (variant in ("next", "for-break") and write_first)
        return Piece(defs, [], call.split("\n"), [h], tags, not runs)

    # -- methods: self.m(buf), overrides, instance attributes, cls, staticmethod -----------------


@dataclass
class WPProgram:
    pieces: list[Piece]
    program: Program
    lib: list[str] = field(default_factory=list)  # what a package's lib.py would hold
    local: list[str] = field(default_factory=list)
    body: list[str] = field(default_factory=list)
    site_tags: dict[int, frozenset[str]] = field(default_factory=dict)  # line -> its piece's tags


@dataclass
class WPMultiProgram(MultiProgram):
    site_tags: dict[int, frozenset[str]] = field(default_factory=dict)


def piece_lines(text: str, pieces: list[Piece], extra: frozenset[str]) -> dict[int, frozenset[str]]:
    """The line of each piece's allocation (its buffer is never rebound) -> that piece's tags:
    recall by construct counts the site of the construct, not every site of its program."""
    lines = [line.strip() for line in text.splitlines()]
    found = {}
    for p in pieces:
        for number, line in enumerate(lines, 1):
            if line.startswith(f"{p.buffer} = "):
                found[number] = frozenset(p.tags) | extra
                break
    return found


def _assemble(pieces: list[Piece]) -> WPProgram:
    lib = [line for p in pieces for line in (*p.lib, "", "")]
    local = [line for p in pieces for line in (*p.local, "", "")]
    body = ["out = []"] + [line for p in pieces for line in p.body] + ["return out"]
    main = [*HEADER, "", "", *lib, *local, "def f(inp, n, k, flag):", *ind(body)]
    tags = frozenset(t for p in pieces for t in p.tags) | {"whole-program"}
    text = main_import("\n".join(main) + "\n", package=False)
    by_line = piece_lines(text, pieces, frozenset({"whole-program"}))
    return WPProgram(pieces, Program(text, tags), lib, local, body, by_line)


def build_wp_program(
    ch: Chooser,
    shapes: list[str] | None = None,
    final_read: bool | None = None,
    among: tuple[str, ...] = DRAWN,
) -> WPProgram:
    """One to three pieces of shapes drawn from `among` (or exactly `shapes`), each with its own
    buffer."""
    gen = _WP(ch, final_read)
    chosen = shapes or [ch.choice(among) for _ in range(ch.integer(1, 3))]
    return _assemble([gen.piece(s) for s in chosen])


def random_wp_program(seed: int, among: tuple[str, ...] = DRAWN) -> WPProgram:
    return build_wp_program(RandomChooser(seed), among=among)


MM_VARIANTS = ("star", "explicit", "chain-star", "reexport", "qualified")


def random_wp_multimodule_program(seed: int, among: tuple[str, ...] = DRAWN) -> WPMultiProgram:
    """The same pieces over a package: lib.py holds the movable definitions."""
    ch = RandomChooser(seed)
    wp = build_wp_program(ch, among=among)
    variant = ch.choice(list(MM_VARIANTS))
    names = sorted({n for p in wp.pieces for n in p.names})
    lib = main_import("\n".join([*HEADER, "", "", *wp.lib]) + "\n", package=True)
    files = {"__init__.py": "", "lib.py": lib}
    local, body = "\n".join(wp.local), "\n".join(wp.body)
    if variant == "qualified" and names:
        pattern = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\b")
        local, body = pattern.sub(r"lib.\1", local), pattern.sub(r"lib.\1", body)
        top = "from . import lib\n"
    elif variant == "explicit" and names:
        top = f"from .lib import {', '.join(names)}\n"
    elif variant == "chain-star":
        files["mid.py"] = "from .lib import *\n"
        top = "from .mid import *\n"
    elif variant == "reexport" and names:
        files["mid.py"] = f"from .lib import {', '.join(names)}\n"
        top = f"from .mid import {', '.join(names)}\n" if ch.chance(50) else "from .mid import *\n"
    else:
        top = "from .lib import *\n"
    main_lines = [*HEADER, top, "", local, "def f(inp, n, k, flag):", *ind(body.split("\n"))]
    main = "\n".join(main_lines) + "\n"
    files["main.py"] = main
    layout = set()
    if ch.chance(30):
        files, main = namespace_layout(f"zo_wp_{seed}", files, ch)
        layout.add("layout-namespace")
    if ch.chance(25):
        own = ch.chance(40)
        lib_name = f"zo_wp_{seed}.ns.lib" if "ns/lib.py" in files else f"zo_wp_{seed}.lib"
        files["stubs.py"] = sys_modules_stubs(f"zo_ext_{seed}", lib_name if own else "")
        main = "from . import stubs  # noqa: F401\n" + main
        files["main.py"] = main
        layout.add("wp-stubs-own" if own else "wp-stubs-foreign")
    extra = frozenset({"whole-program", f"wp-modules-{variant}", *layout})
    tags = wp.program.tags | extra
    by_line = piece_lines(main, wp.pieces, extra)
    return WPMultiProgram(f"zo_wp_{seed}", files, main, ({"torch"}, {}), tags, by_line)


_STUBS = """
import importlib
import sys
import types

import torch


def _make_mock(name):
    mod = types.ModuleType(name)
    sys.modules[name] = mod
    return mod


class _Finder:
    def find_spec(self, fullname, path=None, target=None):
        if fullname == "{ext}" or fullname.startswith("{ext}."):
            return _make_mock("{ext}.found")
        return None


_make_mock("{ext}")
_make_mock("{ext}.language")
_Finder().find_spec("{ext}.runtime")
"""
_OWN = """

def _on_copies(fn):
    def call(*args, **kwargs):
        args = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
        kwargs = {k: v.clone() if isinstance(v, torch.Tensor) else v for k, v in kwargs.items()}
        return fn(*args, **kwargs)

    return call


def _hollow(name):
    real = importlib.import_module(name)
    mod = types.ModuleType(name)
    for key in dir(real):
        value = getattr(real, key)
        if isinstance(value, types.FunctionType) and value.__module__ == name:
            value = _on_copies(value)  # what it writes, the caller's tensors never see
        setattr(mod, key, value)
    sys.modules[name] = mod


_hollow("{lib}")
"""


def sys_modules_stubs(ext: str, lib: str) -> str:
    """A module storing mock modules in `sys.modules` under the top-level name `ext`, which no
    file of the package has (analysis/module_keys.py reads the keys); with `lib`, it also puts a
    hollow copy of the package's lib under lib's own name: its functions run on copies of the
    tensors they are handed, so the caller's buffers are never written."""
    text = _STUBS.replace("{ext}", ext)
    return text + _OWN.replace("{lib}", lib) if lib else text
