"""The `anyorder` shape (`--wp-shapes anyorder`): a class allocates a zeros buffer on `self` in
`__init__`; one to three methods each do something with it (write it in full and read it, read
it first, accumulate into it, write part of it, write it under a flag, write it through a `self`
helper, leave it alone); f makes an object and calls the methods in a drawn order. Traps: the
attribute read by another class or a `lib` function, by `getattr` with a computed name, through
`vars()`, a property handing out a view, a method returning it, a second attribute holding it, a
lambda made in `__init__`, a base class method, a subclass overriding the writing helper. Judged
under any order of the class's methods (analysis/lifecycle_anyorder.py).
"""

from __future__ import annotations

from tests.soundness.wp_blocks import ALLOC_IN_CLASS, Blocks, Buf, Piece, ind

KINDS = ("full-read", "read", "write", "part", "part-read", "flag-full-read", "helper-read",
         "accumulate", "none")  # fmt: skip
# Kinds that never read what they did not write first: a class made of them only is `safe`.
CLEAN = ("full-read", "write", "helper-read", "none", "part")
TRAPS = ("none", "none", "none", "none", "none", "none", "none", "none", "other-class", "getattr", "vars", "property",
         "returned", "alias-attr", "lambda", "base", "subclass")  # fmt: skip
# (slice text, rows it writes of R rows)
_PARTS = (("[0]", lambda r: {0}), ("[1:]", lambda r: set(range(1, r))),
          ("[::2]", lambda r: set(range(0, r, 2))))  # fmt: skip


class AnyOrderShapes(Blocks):
    def shape_anyorder(self, u: str, b: Buf) -> Piece:
        x, cls = b.name, f"A{u}"
        trap = self.ch.choice(list(TRAPS))
        tags = {f"wp-anyorder-{trap}"}
        if trap == "getattr":
            # Split over a package, the reader by a computed name lives in lib.py: outside the
            # module the closed world checks (an assumption of the rule page).
            tags.add("wp-closed-world-violation")
        kinds = CLEAN if trap == "none" and self.ch.chance(50) else KINDS
        rows = b.shape[0]
        c = self.const(b)
        init = ["def __init__(self, inp):", f"    self.{x} = {self.alloc(b)}"]
        if trap == "lambda":
            init.append(f"    self.cb{u} = lambda: self.{x}.float().sum()")
        methods: list[str] = []
        every = set(range(rows))
        # Per method: (name, rows written before its read, reads it, rows written in all), with
        # `flag` false (a valid input, and the one with the fewest writes).
        effects: list[tuple[str, set[int], bool, set[int]]] = []
        helper = False
        for i in range(self.ch.integer(1, 3)):
            kind = self.ch.choice(list(kinds))
            tags.add(f"wp-anyorder-{kind}")
            m = f"m{u}_{i}"
            read = f"return {self.read(f'self.{x}')}"
            body: list[str]
            pre: set[int] = set()
            total: set[int] = set()
            reads_it = True
            if kind == "full-read":
                body, pre, total = [*self.full(f"self.{x}", b), read], every, every
            elif kind == "read":
                body = [read]
            elif kind == "write":
                body, total, reads_it = [*self.full(f"self.{x}", b), "return 0"], every, False
            elif kind in ("part", "part-read"):
                text, got = self.ch.choice(list(_PARTS))
                total = pre = got(rows)
                reads_it = kind == "part-read"
                body = [f"self.{x}{text} = {c}", read if reads_it else "return 0"]
            elif kind == "flag-full-read":
                body = ["if on:", *ind(self.full(f"self.{x}", b)), read]
            elif kind == "helper-read":
                helper = True
                body = [f"self._fill{u}()", read]
                total = pre = every if trap != "subclass" else set()
            elif kind == "accumulate":
                body = [f"self.{x} += 1", read]  # keeps what was there: still unwritten
            else:
                body, reads_it = ["return 1"], False
            methods += [f"def {m}(self, on):", *ind(body), ""]
            effects.append((m, pre, reads_it, total))
        if helper or trap == "subclass":
            methods += [f"def _fill{u}(self):", *ind(self.full(f"self.{x}", b)), ""]
        lib: list[str] = []
        names: list[str] = []
        local: list[str] = []
        fbody: list[str] = []
        made = f"S{u}" if trap == "subclass" else cls
        fbody.append(f"o{u} = {made}(inp)")
        reads = True  # a trap reads it right after __init__
        if trap == "other-class":
            lib += [f"class R{u}:", "    def peek(self, o):", f"        return o.{x}.float().sum()"]
            names.append(f"R{u}")
            fbody.append(f"out.append(R{u}().peek(o{u}))")
        elif trap == "getattr":
            lib += [f"def peek{u}(o, name):", "    return getattr(o, name).float().sum()"]
            names.append(f"peek{u}")
            fbody.append(f"out.append(peek{u}(o{u}, 'b' + '{u}'))")
        elif trap == "vars":
            fbody.append(
                f"out.append(sum(v.float().sum() for v in vars(o{u}).values() "
                "if isinstance(v, torch.Tensor)))"
            )
        elif trap == "property":
            methods += ["@property", f"def head{u}(self):", f"    return self.{x}[:1]", ""]
            fbody.append(f"out.append(o{u}.head{u}.clone())")
        elif trap == "returned":
            methods += [f"def get{u}(self):", f"    return self.{x}", ""]
            fbody.append(f"out.append(o{u}.get{u}().clone())")
        elif trap == "alias-attr":
            methods += [f"def keep{u}(self):", f"    self.k{u} = self.{x}", ""]
            methods += [f"def peek{u}(self):", f"    return self.k{u}.float().sum()", ""]
            fbody += [f"o{u}.keep{u}()", f"out.append(o{u}.peek{u}())"]
        elif trap == "lambda":
            fbody.append(f"out.append(o{u}.cb{u}())")
        elif trap == "base":
            lib += [
                f"class P{u}:",
                f"    def peekb{u}(self):",
                f"        return self.{x}.float().sum()",
            ]
            names.append(f"P{u}")
            fbody.append(f"out.append(o{u}.peekb{u}())")
        else:
            reads = False
        written: set[int] = set()
        for _ in range(self.ch.integer(1, 4)):
            m, pre, reads_it, total = self.ch.choice(effects)
            fbody.append(f"out.append(o{u}.{m}(flag))")
            if reads_it and written | pre != every:
                reads = True
            written |= total
        base = f"(P{u})" if trap == "base" else ""
        local += [f"class {cls}{base}:", *ind([*init, "", *methods]), "", ""]
        if trap == "subclass":
            local += [f"class S{u}({cls}):", f"    def _fill{u}(self):", "        pass", "", ""]
        return Piece(lib, local, [ALLOC_IN_CLASS, *fbody], names, tags, reads)
