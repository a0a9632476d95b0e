"""The `anyorder` shape (`--wp-shapes anyorder`): a class allocates a zeros buffer on `self` in
`__init__`; one to three methods each do something with it (write it in full and read it, read
it first, accumulate into it, write part of it, write it under a flag, write it through a `self`
helper, leave it alone); f makes an object and calls the methods in a drawn order. Traps: the
attribute read by another class or a `lib` function, by `getattr` with a computed name, through
`vars()`, a property handing out a view, a method returning it, a second attribute holding it, a
lambda made in `__init__`, a base class method, a subclass overriding the writing helper; a
class decorator adding a reading base to other classes (`bases-deco-other`) or to the class
(`bases-deco-cls`, through `d()(cls)`); reflection that cannot reach the object
(`getattr(self, k)` in an unrelated class, on a module, on a local made from another class,
`vars` of a class object) and reflection that can
(`getattr(self, name)` in a subclass or in a base a subclass shares with the class, an unrelated
method run with the object as `self` through its class or `type(x)`, `vars` of a local made from
the class); an attribute of the same name on another class's objects, read once through that
class with the object as `self`; a base of the tree that keeps to its own attributes; lookups by
a computed name whose possible names the syntax shows (a loop over literals, a split string, a
dict display, an f-string head) that never name the attribute (`names-miss`) or do, by a
concatenation, a prefix, a rebound loop variable or a dunder (`names-hit`); a class made at
run time from a class a subclass shares (`make-unrelated`) or from a subclass (`make-sub`). Judged
under any order of the class's methods (analysis/lifecycle_anyorder.py). `reset-first`,
`lib-writes`, `computed-reset`: a writer of the whole buffer that f always runs before the other
methods (a public method, a lib function through the object, a method reaching the attribute by a
computed name): near misses that a read-modify-write in a public method must not make `unsafe`
(analysis/self_reads.py).
"""

from __future__ import annotations

from tests.soundness.wp_blocks import ALLOC_IN_CLASS, Blocks, Buf, Piece, ind

KINDS = ("full-read", "read", "write", "part", "part-read", "flag-full-read", "helper-read",
         "accumulate", "none")  # fmt: skip
# Kinds that never read what they did not write first: a class made of them only is `safe`.
CLEAN = ("full-read", "write", "helper-read", "none", "part")
TRAPS = ("none", "none", "none", "none", "none", "none", "none", "none", "other-class", "getattr", "vars", "property",
         "returned", "alias-attr", "lambda", "base", "subclass", "refl-unrelated", "refl-unrelated",
         "refl-subclass", "refl-unbound", "refl-type", "refl-local", "refl-sibling", "same-name",
         "same-name-unbound", "base-clean", "base-clean", "names-miss", "names-miss", "names-hit",
         "names-hit", "make-unrelated", "make-sub", "reset-first", "lib-writes",
         "computed-reset", "bases-add-clean", "bases-add-sub", "bases-add-reader",
         "base-globals-miss", "bases-deco-other", "bases-deco-cls")  # fmt: skip
# Traps whose writer runs first, before any method f calls: nothing is read unwritten.
_PRIMED = ("reset-first", "lib-writes", "computed-reset")
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
                total = pre = (
                    every if trap not in ("subclass", "make-sub", "bases-add-sub") else set()
                )
            elif kind == "accumulate":
                body = [f"self.{x} += 1", read]  # keeps what was there: still unwritten
            else:
                body, reads_it = ["return 1"], False
            methods += [f"def {m}(self, on):", *ind(body), ""]
            effects.append((m, pre, reads_it, total))
        if helper or trap in ("subclass", "make-sub", "bases-add-sub"):
            methods += [f"def _fill{u}(self):", *ind(self.full(f"self.{x}", b)), ""]
        lib: list[str] = []
        tail_classes: list[str] = []  # after the class: subclasses, functions making one
        names: list[str] = []
        local: list[str] = []
        fbody: list[str] = []
        made = {"subclass": f"S{u}", "refl-subclass": f"D{u}", "refl-sibling": f"E{u}",
                "make-sub": f"lazy{u}", "bases-add-sub": f"ext{u}(Lazy{u})",
                "bases-add-reader": f"ext{u}({cls})",
                "bases-deco-cls": f"_deco{u}()({cls})"}.get(trap, cls)  # fmt: skip
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
        elif trap == "refl-unrelated":
            # Reflection that reaches no instance of the class: `self` of an unrelated class, a
            # module, a local made from another class, a class object.
            lib += [f"class Cfg{u}:", "    def __init__(self):", "        self.v = 2",
                    "    def get(self, k):", "        return getattr(self, k)", "",
                    f"class Reg{u}:", "    size = 3", "",
                    f"def opt{u}(k, v):", f"    o = Reg{u}()", "    setattr(o, k, v)",
                    f"    return getattr(torch, 'flo' + 'at32'), len(vars(Reg{u})), o"]  # fmt: skip
            names += [f"Cfg{u}", f"Reg{u}", f"opt{u}"]
            fbody += [f"out.append(torch.tensor(float(Cfg{u}().get('v'))))",
                      f"opt{u}('w', 1)"]  # fmt: skip
            reads = False
        elif trap == "base-clean":
            # A base of the tree that keeps to its own attributes and methods.
            lib += [f"class P{u}:", "    tag = 1", "    def __init__(self):",
                    "        self.count = 0", f"    def bump{u}(self):",
                    "        self.count += self.tag", "        return self.count"]  # fmt: skip
            names.append(f"P{u}")
            init.insert(1, "    super().__init__()")
            fbody.append(f"out.append(torch.tensor(float(o{u}.bump{u}())))")
            reads = False
        elif trap in ("same-name", "same-name-unbound"):
            # Another class keeps an attribute of the same name on its own objects; run through
            # the class with the object as `self`, its method reads the buffer.
            lib += [f"class Oth{u}:", "    def __init__(self):", f"        self.{x} = torch.ones(2)",
                    "    def total(self):", f"        return self.{x}.float().sum()", "",
                    f"def oth{u}():", f"    o = Oth{u}()", f"    return o.{x}"]  # fmt: skip
            names += [f"Oth{u}", f"oth{u}"]
            fbody.append(f"out.append(Oth{u}().total() + oth{u}().sum())")
            if trap == "same-name-unbound":
                fbody.append(f"out.append(Oth{u}.total(o{u}))")
            else:
                reads = False
        elif trap in ("refl-subclass", "refl-sibling"):
            # `getattr(self, name)` in a class whose `self` may be an instance of the class: a
            # subclass, or a class another one derives from together with it.
            dump = ["    def dump(self, name):", "        return getattr(self, name).float().sum()"]
            if trap == "refl-subclass":
                tail_classes += [f"class D{u}({cls}):", *dump, "", ""]
            else:
                lib += [f"class D{u}:", *dump]
                names.append(f"D{u}")
                tail_classes += [f"class E{u}({cls}, D{u}):", "    pass", "", ""]
            fbody.append(f"out.append(o{u}.dump('b' + '{u}'))")
        elif trap in ("refl-unbound", "refl-type"):
            # An unrelated class's method run with the object as `self`.
            lib += [f"class Q{u}:", "    def peek(self, name):",
                    "        return getattr(self, name).float().sum()"]  # fmt: skip
            names.append(f"Q{u}")
            how = f"Q{u}.peek" if trap == "refl-unbound" else f"type(Q{u}()).peek"
            fbody.append(f"out.append({how}(o{u}, 'b' + '{u}'))")
        elif trap == "refl-local":
            tail_classes += [f"def tot{u}(inp):", f"    g = {cls}(inp)",
                             "    return sum(v.float().sum() for v in vars(g).values() "
                             "if isinstance(v, torch.Tensor))", "", ""]  # fmt: skip
            fbody.append(f"out.append(tot{u}(inp))")
        elif trap.startswith(("bases-add", "bases-deco")) or trap == "base-globals-miss":
            reads = self._store_trap(u, cls, trap, lib, names, tail_classes, fbody, init)
        elif trap in ("names-miss", "names-hit", "make-unrelated", "make-sub"):
            reads = self._names_trap(u, x, cls, trap, lib, names, tail_classes, fbody)
        elif trap in _PRIMED:
            # A writer of the whole buffer that f always runs first: a public method, a lib
            # function through the object, a method reaching it by a computed name.
            if trap == "reset-first":
                methods += [f"def reset{u}(self):", *ind(self.full(f"self.{x}", b)), ""]
                fbody.append(f"o{u}.reset{u}()")
            elif trap == "computed-reset":
                methods += [
                    f"def reset{u}(self):",
                    f"    getattr(self, 'b' + '{u}').fill_({c})",
                    "",
                ]
                fbody.append(f"o{u}.reset{u}()")
            else:
                lib += [f"def prime{u}(o):", *ind(self.full(f"o.{x}", b))]
                names.append(f"prime{u}")
                fbody.append(f"prime{u}(o{u})")
            reads = False
        else:
            reads = False
        written: set[int] = set(every) if trap in _PRIMED else set()
        for _ in range(self.ch.integer(1, 4)):
            m, pre, reads_it, total = self.ch.choice(effects)
            fbody.append(f"out.append(o{u}.{m}(flag))")
            if reads_it and written | pre != every:
                reads = True
            written |= total
        base = f"(P{u})" if trap in ("base", "base-clean", "base-globals-miss") else ""
        base = "(torch.nn.Module)" if trap in ("bases-add-reader", "bases-deco-cls") else base
        local += [f"class {cls}{base}:", *ind([*init, "", *methods]), "", ""]
        if trap == "subclass":
            local += [f"class S{u}({cls}):", f"    def _fill{u}(self):", "        pass", "", ""]
        local += tail_classes
        return Piece(lib, local, [ALLOC_IN_CLASS, *fbody], names, tags, reads)

    def _names_trap(
        self, u: str, x: str, cls: str, trap: str, lib: list[str], names: list[str],
        tail: list[str], fbody: list[str],
    ) -> bool:  # fmt: skip
        """Lookups by names the syntax shows, or a class made at run time; whether it reads the
        buffer right after `__init__`."""
        if trap == "names-miss":
            it = self.ch.choice(["('v', 'w')", "'v w'.split()", "{'v': 1, 'w': 2}.items()"])
            target = "n, _" if it.endswith(".items()") else "n"
            lib += [f"def cfg{u}(o, rest):", f"    found = [getattr(o, n, 0) for {target} in {it}]",
                    "    for k in ('v', 'w'):", "        setattr(o, k, 1)",
                    "    key = 'v' if found else 'w'",
                    "    found.append(getattr(o, key, 0))",
                    "    found.append(getattr(o, f'cfg_{rest}', 0))", "    return len(found)"]  # fmt: skip
            names.append(f"cfg{u}")
            fbody.append(f"out.append(torch.tensor(float(cfg{u}(o{u}, 'a'))))")
            return False
        if trap == "names-hit":
            form = self.ch.choice(["concat", "prefix", "rebound", "dunder"])
            head, rest = x[:1], x[1:]
            if form == "concat":
                body = [f"for n in ('v', '{head}' + '{rest}'):", "    if hasattr(o, n):",
                        "        return getattr(o, n).float().sum()", "return 0"]  # fmt: skip
            elif form == "prefix":
                body = [f"return getattr(o, f'{head}{{rest}}').float().sum()"]
            elif form == "rebound":
                body = ["for n in ('v',):", f"    n = '{head}' + rest",
                        "    return getattr(o, n).float().sum()"]  # fmt: skip
            else:
                body = ["for n in ('__dict__',):",
                        f"    return getattr(o, n)['{head}' + rest].float().sum()"]  # fmt: skip
            lib += [f"def peekn{u}(o, rest):", *ind(body)]
            names.append(f"peekn{u}")
            fbody.append(f"out.append(peekn{u}(o{u}, '{rest}'))")
            return True
        # A class made at run time: from a stub class a subclass of the class also derives
        # from (its instances are no instance of the class), or from a subclass of the class
        # whose method reads the buffer.
        if trap == "make-unrelated":
            lib += [f"class Stub{u}:", "    pass", "", f"def stub{u}(name):",
                    f"    return type(name, (Stub{u},), {{'__module__': 'stubs'}})"]  # fmt: skip
            names += [f"Stub{u}", f"stub{u}"]
            tail += [f"class Both{u}({cls}, Stub{u}):", "    pass", "", ""]
            fbody.append(f"out.append(torch.tensor(float(len(stub{u}('K').__name__))))")
            return False
        # `make-sub`: made from a subclass, its `_fill` does nothing: the helper's readers read
        # the buffer unwritten (as the `subclass` trap, with no class statement overriding it).
        tail += [f"class Sub{u}({cls}):", "    pass", "", "",
                 f"def lazy{u}(inp):",
                 f"    kind = type('Lazy', (Sub{u},), {{'_fill{u}': lambda self: None}})",
                 "    return kind(inp)", "", ""]  # fmt: skip
        return False

    def _store_trap(
        self, u: str, cls: str, trap: str, lib: list[str], names: list[str],
        tail: list[str], fbody: list[str], init: list[str],
    ) -> bool:  # fmt: skip
        """A store of a class's bases that adds a named class (`T.__bases__ = T.__bases__ +
        (E,)`), or `globals()` in the module of a base under names that exclude the base's;
        whether it reads the buffer right after `__init__`."""
        ext = [f"def ext{u}(k):", f"    if {{}}{u} not in k.__bases__:  # run twice: once",
               f"        k.__bases__ = k.__bases__ + ({{}}{u},)", "    return k"]  # fmt: skip
        if trap == "bases-add-clean":
            # A harmless class added to another class's bases (it may be any class's).
            lib += [f"class Tag{u}:", "    def tag(self):", "        return 1", "",
                    f"class Hold{u}:", "    pass", "", f"class Box{u}(Hold{u}):", "    pass", "",
                    *[t.format("Tag") for t in ext]]  # fmt: skip
            names += [f"Tag{u}", f"Box{u}", f"ext{u}"]
            fbody.append(f"out.append(torch.tensor(float(ext{u}(Box{u})().tag())))")
            return False
        if trap == "bases-add-sub":
            # A subclass of the class added to another class's bases: that class becomes a
            # subclass whose `_fill` does nothing.
            tail += [f"class Sub{u}({cls}):", "    pass", "", "", f"class Hold{u}:", "    pass",
                     "", "", f"class Lazy{u}(Hold{u}):", f"    def _fill{u}(self):",
                     "        pass", "", "", *[t.format("Sub") for t in ext], "", ""]  # fmt: skip
            return False
        if trap == "bases-add-reader":
            # A class added to the class's own bases whose method reads the object's tensors.
            init.insert(1, "    super().__init__()")
            lib += [f"class Dump{u}:", "    def dump(self):",
                    "        return sum(v.float().sum() for v in vars(self).values() "
                    "if isinstance(v, torch.Tensor))", ""]  # fmt: skip
            names.append(f"Dump{u}")
            tail += [*[t.format("Dump") for t in ext], "", ""]
            fbody.append(f"out.append(o{u}.dump())")
            return True
        if trap.startswith("bases-deco"):
            # A class decorator shaped like vllm's `support_torch_compile` (`@d`, `@d(...)`,
            # `d()(k)`, through a nested helper) adds a class reading the object's tensors to
            # the classes it is given: another class of lib (`other`), or the class (`cls`).
            lib += [f"class Dump{u}:", "    def dump(self):",
                    "        return sum(v.float().sum() for v in vars(self).values() "
                    "if isinstance(v, torch.Tensor))", "",
                    f"def _grow{u}(k):", f"    if Dump{u} not in k.__bases__:",
                    f"        k.__bases__ = k.__bases__ + (Dump{u},)", "    return k", "",
                    f"def _deco{u}(k=None):", "    def helper(k):", f"        return _grow{u}(k)",
                    "", "    if k is not None:", "        return helper(k)", "    return helper",
                    ""]  # fmt: skip
            if trap == "bases-deco-other":
                lib += [f"@_deco{u}", f"class Other{u}(torch.nn.Module):",
                        "    def __init__(self):", "        super().__init__()",
                        "        self.t = torch.ones(2)", "", f"@_deco{u}()",
                        f"class Third{u}(torch.nn.Module):", "    pass", ""]  # fmt: skip
                names.append(f"Other{u}")
                fbody.append(f"out.append(Other{u}().dump())")
                return False
            init.insert(1, "    super().__init__()")
            names.append(f"_deco{u}")
            fbody.append(f"out.append(o{u}.dump())")
            return True
        # `base-globals-miss`: a base of the tree, its module storing other names in `globals()`.
        lib += [f"class P{u}:", "    tag = 1", f"    def bump{u}(self):", "        return self.tag",
                "", f"def reg{u}():", f"    for k in ('v{u}', 'w{u}'):",
                "        globals()[k] = 1", "    return 1"]  # fmt: skip
        names += [f"P{u}", f"reg{u}"]
        fbody.append(f"out.append(torch.tensor(float(reg{u}() + o{u}.bump{u}())))")
        return False
