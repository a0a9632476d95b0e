"""Shapes where the buffer crosses an object: a method `self.put(buf)` and its overrides, `cls`
and `staticmethod` dispatch; dataclass constructors and fields; SimpleNamespace, dict, list and
tuple holders (see tests/soundness/whole_program.py)."""

from __future__ import annotations

from tests.soundness.wp_blocks import ALLOC_IN_CLASS, Blocks, Buf, Piece, ind


class ObjectShapes(Blocks):
    def shape_method(self, u: str, b: Buf) -> Piece:
        base, run, sub = f"Base{u}", f"Run{u}", f"Sub{u}"
        x = b.name
        variant = self.ch.choice(
            [
                "plain",
                "override-read",
                "override-part",
                "override-unused",
                "sub-no-override",
                "instance-attr",
                "monkeypatch",
                "dynamic-subclass",
                "classmethod",
                "staticmethod",
                "direct-call",
                "mixin",
                "grandparent",
                "override-super",
            ]
        )
        tags = {f"wp-method-{variant}"}
        if variant in ("monkeypatch", "dynamic-subclass", "instance-attr"):
            tags.add("wp-closed-world-violation")
        write = ind(self.full("t", b), 2)
        # the base with the writing method may live in another module; the allocating class not
        lib = [f"class {base}:", "    def put(self, t):", *write]
        if variant in ("classmethod", "staticmethod"):
            lib = [f"class {base}:", "    @staticmethod", "    def put(t):", *write]
        alloc = f"{x} = {self.alloc(b)}"
        call = "self.put" if variant != "classmethod" else "cls.put"
        head = (
            "    @classmethod\n    def run(cls, inp, n, k, flag):"
            if variant == "classmethod"
            else ("    def run(self, inp, n, k, flag):")
        )
        local = [
            f"class {run}({base}):",
            *head.split("\n"),
            f"        {alloc}",
            f"        {call}({x})",
            f"        return {x}.clone()",
        ]
        used = run
        differs: bool | None = False
        names = [base]
        reader = ["    def put(self, t):", "        return t.float().sum()"]
        partial = ["    def put(self, t):", *ind(self.part("t", b), 2)]
        if variant == "mixin":  # the method resolution order decides which `put` runs
            mix = f"Mix{u}"
            lib += ["", "", f"class {mix}:", *reader]
            order, differs = self.ch.choice([(f"{mix}, {base}", True), (f"{base}, {mix}", False)])
            local[0] = f"class {run}({order}):"
            names.append(mix)
        elif variant == "grandparent":  # the override sits between the base and the class
            mid = f"Mid{u}"
            lib += ["", "", f"class {mid}({base}):", *partial]
            local[0] = f"class {run}({mid}):"
            names.append(mid)
            differs = True
        elif variant == "override-super":
            arg, differs = self.ch.choice([("t", False), ("t[1:]", True)])
            local += ["", "", f"class {sub}({run}):", "    def put(self, t):"]
            local.append(f"        super().put({arg})")
            used = sub
        elif variant in ("override-read", "override-part", "override-unused"):
            local += [
                "",
                "",
                f"class {sub}({run}):",
                *(partial if variant == "override-part" else reader),
            ]
            if variant != "override-unused":
                used, differs = sub, True
        elif variant == "sub-no-override":
            local += ["", "", f"class {sub}({run}):", "    scale = 2"]
            used = sub
        elif variant == "instance-attr":
            local += [
                "",
                "",
                f"class {sub}({run}):",
                "    def __init__(self):",
                "        self.put = lambda t: None",
            ]
            used, differs = sub, True
        elif variant == "monkeypatch":
            local += ["", "", f"{run}.put = lambda self, t: None"]
            differs = True
        elif variant == "dynamic-subclass":
            local += ["", "", f"{sub} = type('{sub}', ({run},), {{'put': lambda self, t: None}})"]
            used, differs = sub, True
        elif variant in ("classmethod", "staticmethod"):
            if self.ch.chance(60):
                static_part = ["    @staticmethod", "    def put(t):", *ind(self.part("t", b), 2)]
                local += ["", "", f"class {sub}({run}):", *static_part]
                if self.ch.chance(60):
                    used, differs = sub, True
                tags.add("wp-static-override")
        else:  # direct-call: the instance method called from f, on an instance of the subclass
            local = [f"class {sub}({base}):", *reader]
            used_cls, overridden = self.ch.choice([(base, False), (sub, True)])
            differs = overridden
            body = [f"{x} = {self.alloc(b)}", f"obj{u} = {used_cls}()", f"obj{u}.put({x})"]
            if self.final_now:
                body.append(f"out.append({x}.clone())")
            elif differs:
                differs = None
            return Piece(lib, local, [ALLOC_IN_CLASS, *body], [base], tags, differs)
        target = f"{used}()" if variant != "classmethod" else used
        return Piece(
            lib,
            local,
            [ALLOC_IN_CLASS, f"out.append({target}.run(inp, n, k, flag))"],
            names,
            tags,
            differs,
        )

    # -- dataclasses -----------------------------------------------------------------------------

    def shape_selfcall(self, u: str, b: Buf) -> Piece:
        """`self.put(buf)` where the allocating class defines `put` itself; what else in the
        module may make `self.put` another function: subclasses (used or not, directly, through
        an alias, a grandchild, a computed or starred base, `type(...)`), assignments of the
        name (on the class, on the instance, through `__dict__`, `__setattr__`, `setattr`), a
        call of `run` with an unrelated receiver."""
        run, sub, x = f"Own{u}", f"OwnSub{u}", b.name
        variant = self.ch.choice(
            [
                "plain", "plain", "part", "read-first", "override-read", "override-part",
                "override-unused", "sub-no-override", "grandchild", "alias-base",
                "instance-attr", "dunder-setattr", "dict-assign", "monkeypatch", "setattr",
                "dynamic-type", "starred-bases", "factory-base", "unbound-call", "classmethod",
                "staticmethod", "raise-before", "class-body-rebind",
            ]
        )  # fmt: skip
        tags = {f"wp-selfcall-{variant}"}
        if variant in ("dynamic-type", "starred-bases", "factory-base", "unbound-call"):
            tags.add("wp-closed-world-violation")
        kind = {"part": "part", "read-first": "read"}.get(variant, "full")
        leaf = self.leaf(kind, "put", b)
        put = ["    def put(self, t):", *ind(leaf[1:])]
        run_head, call = ["    def run(self, inp, n, k, flag):"], "self.put"
        if variant in ("classmethod", "staticmethod"):
            put = ["    @staticmethod", "    def put(t):", *ind(leaf[1:])]
            if variant == "classmethod":
                run_head, call = (
                    ["    @classmethod", "    def run(cls, inp, n, k, flag):"],
                    "cls.put",
                )
        body = [f"{x} = {self.alloc(b)}", f"r = {call}({x})"]  # what put returns is seen
        if variant == "raise-before":
            put = ["    def put(self, t):", "        if self.fail:", "            raise ValueError",
                   *ind(self.full("t", b), 2)]  # fmt: skip
            body = [f"{x} = {self.alloc(b)}", "self.fail = flag", "try:", f"    self.put({x})",
                    "except ValueError:", "    pass"]  # fmt: skip
        ret = f"({x}.clone(), r)" if variant != "raise-before" else f"{x}.clone()"
        local = [f"class {run}:", *run_head, *ind(body, 2), f"        return {ret}", "", *put]
        if variant == "class-body-rebind":  # the class body binds `put` a second time
            local += ["", "    put = lambda self, t: None"]
        reader = ["    def put(self, t):", "        return t.float().sum()"]
        partial = ["    def put(self, t):", *ind(self.part("t", b), 2)]
        nothing = "lambda *a: None"
        used, differs = run, kind != "full" or variant in ("raise-before", "class-body-rebind")
        extra: dict[str, tuple[list[str], str]] = {
            "override-read": ([f"class {sub}({run}):", *reader], sub),
            "override-part": ([f"class {sub}({run}):", *partial], sub),
            "override-unused": ([f"class {sub}({run}):", *reader], run),
            "sub-no-override": ([f"class {sub}({run}):", "    scale = 2"], sub),
            "grandchild": ([f"class {sub}({run}):", "    scale = 2", "", "",
                            f"class {sub}2({sub}):", *reader], f"{sub}2"),
            "alias-base": ([f"Alias{u} = {run}", "", "", f"class {sub}(Alias{u}):", *reader], sub),
            "instance-attr": ([f"class {sub}({run}):", "    def __init__(self):",
                               f"        self.put = {nothing}"], sub),
            "dunder-setattr": ([f"class {sub}({run}):", "    def __init__(self):",
                                f"        object.__setattr__(self, 'put', {nothing})"], sub),
            "dict-assign": ([f"class {sub}({run}):", "    def __init__(self):",
                             f"        self.__dict__['put'] = {nothing}"], sub),
            "monkeypatch": ([f"{run}.put = {nothing}"], run),
            "setattr": ([f"setattr({run}, 'put', {nothing})"], run),
            "dynamic-type": ([f"{sub} = type('{sub}', ({run},), {{'put': {nothing}}})"], sub),
            "starred-bases": ([f"bases{u} = ({run},)", "", "", f"class {sub}(*bases{u}):",
                               *reader], sub),
            "factory-base": ([f"def base{u}():", f"    return {run}", "", "",
                              f"class {sub}(base{u}()):", *reader], sub),
            "unbound-call": ([f"class {sub}:", *reader], sub),
        }  # fmt: skip
        if variant in extra:
            more, used = extra[variant]
            local += ["", "", *more]
            differs = differs or used != run or variant in ("monkeypatch", "setattr")
            if variant == "sub-no-override":
                differs = kind != "full"
        elif variant in ("classmethod", "staticmethod") and self.ch.chance(50):
            static_part = ["    @staticmethod", "    def put(t):", *ind(self.part("t", b), 2)]
            local += ["", "", f"class {sub}({run}):", *static_part]
            tags.add("wp-static-override")
            used, differs = self.ch.choice([(run, differs), (sub, True)])
        if variant == "unbound-call":
            target = f"{run}.run({sub}(), inp, n, k, flag)"
        elif variant == "classmethod":
            target = f"{used}.run(inp, n, k, flag)"
        else:
            target = f"{used}().run(inp, n, k, flag)"
        return Piece([], local, [ALLOC_IN_CLASS, f"out.append({target})"], [], tags, differs)

    def shape_dataclass(self, u: str, b: Buf) -> Piece:
        m, x, s = f"Meta{u}", b.name, f"{b.src}.clone()"
        variant = self.ch.choice(
            [
                "keyword",
                "positional",
                "swapped-fields",
                "post-init-copy",
                "post-init-read",
                "reassigned",
                "subclass",
                "frozen",
                "module-attr",
                "init-false",
                "plain-class",
                "plain-class-copy",
                "via-helper",
            ]
        )
        tags = {f"wp-dataclass-{variant}"}
        fields = ["    buf: torch.Tensor", "    size: int = 0"]
        deco = "@dataclass(frozen=True)" if variant == "frozen" else "@dataclass"
        cls = [deco, f"class {m}:", *fields]
        ctor = f"{m}(buf={x}, size=3)" if variant != "positional" else f"{m}({x}, 3)"
        aliased = variant not in ("post-init-copy", "reassigned")  # m.buf is the buffer
        if variant == "swapped-fields":
            cls = ["@dataclass", f"class {m}:", "    other: torch.Tensor", "    buf: torch.Tensor"]
            ctor, aliased = self.ch.choice([(f"{m}({x}, {s})", False), (f"{m}({s}, {x})", True)])
        elif variant == "post-init-copy":
            cls += ["", "    def __post_init__(self):", "        self.buf = self.buf.clone()"]
        elif variant == "post-init-read":
            cls += [
                "",
                "    def __post_init__(self):",
                "        self.size = float(self.buf.float().sum())",
            ]
        elif variant == "subclass":
            cls += ["", "", "@dataclass", f"class {m}Sub({m}):", "    extra: int = 1"]
            ctor = f"{m}Sub(buf={x})"
        elif variant == "module-attr":
            cls[0] = "@dataclasses.dataclass"
        elif variant in ("init-false", "plain-class", "plain-class-copy"):
            # a constructor of its own: only a dataclass's generated __init__ stores as given
            copy = variant != "plain-class"
            cls = [] if variant != "init-false" else ["@dataclass(init=False)"]
            cls += [f"class {m}:", *(fields if variant == "init-false" else [])]
            cls += ["    def __init__(self, buf, size=0):"]
            cls += [
                f"        self.buf = buf{'.clone()' if copy else ''}",
                "        self.size = size",
            ]
            aliased = not copy
        elif variant == "via-helper":  # the field is written by a function that gets the object
            how = self.ch.choice(["fill", "part", "copy-then-fill"])
            c = self.const(b)
            put = {
                "fill": [f"m.buf.fill_({c})"],
                "part": [f"m.buf[1:] = {c}"],
                "copy-then-fill": ["m.buf = m.buf.clone()", f"m.buf.fill_({c})"],
            }[how]
            cls += ["", "", f"def put{u}(m):", *ind(put)]
            tags.add(f"wp-dataclass-via-helper-{how}")
            body = [f"m{u} = {ctor}", f"put{u}(m{u})"]
            return Piece(cls, [], body, [m, f"put{u}"], tags, how != "fill")
        body = [f"m{u} = {ctor}"]
        if variant == "reassigned":
            body.append(f"m{u}.buf = {s}")
        body += self.use_field(f"m{u}.buf", b)
        # a field holding a copy of the buffer read it when copied: every use then differs
        copied = variant in ("post-init-copy", "init-false", "plain-class-copy")
        differs = True if copied else self.field_differs(aliased)
        if variant == "post-init-read":
            body.append(f"out.append(m{u}.size)")
            differs = True
        names = [m] + ([f"{m}Sub"] if variant == "subclass" else [])
        return Piece(cls, [], body, names, tags, differs)

    def shape_factory(self, u: str, b: Buf) -> Piece:
        """`--wp-shapes factory`: a classmethod of a dataclass allocates the buffer into a field
        of `cls(...)` and returns the object (analysis/record_factories.py); the caller takes
        the field out. Near misses make `cls` another class: a subclass whose `__post_init__`
        reads the field, one with no code of its own (`cls` then unresolved), the undecorated
        function called with a class whose `__init__` reads it, the class handed to a helper
        that wraps its `__init__`, the classmethod object fetched from the class's namespace
        and bound to another class."""
        m, x = f"Meta{u}", b.name
        variant = self.ch.choice(
            ["returned", "bound", "kw-only", "sub-post-init", "sub-plain", "func-other",
             "patched", "namespace-other"]
        )  # fmt: skip
        use = ""
        tags = {f"wp-factory-{variant}"}
        deco = "@dataclass(frozen=True, kw_only=True)" if variant == "kw-only" else "@dataclass"
        made = f"cls(buf={self.alloc(b)}, size=3)"
        make = ["    @classmethod", "    def make(cls, inp, n, k, flag):"]
        if variant == "bound":  # the object bound in the classmethod, a field written or read
            c = self.const(b)
            use = self.ch.choice(["full", "part", "read"])
            tags.add(f"wp-factory-bound-{use}")
            step = {
                "full": [f"m.buf.fill_({c})"],
                "part": [f"m.buf[1:] = {c}"],
                "read": ["m.size = float(m.buf.float().sum())"],
            }[use]
            make += [f"        m = {made}", *ind(step, 2), "        return m"]
        else:
            make += [f"        return {made}"]
        local = [deco, f"class {m}:", "    buf: torch.Tensor", "    size: float = 0", "", *make]
        used = f"{m}.make(inp, n, k, flag)"
        read_in_ctor = False
        if variant == "sub-post-init":
            local += ["", "", "@dataclass", f"class {m}Sub({m}):",
                      "    def __post_init__(self):",
                      "        self.size = float(self.buf.float().sum())"]  # fmt: skip
            used, read_in_ctor = f"{m}Sub.make(inp, n, k, flag)", True
        elif variant == "sub-plain":
            local += ["", "", "@dataclass", f"class {m}Sub({m}):", "    extra: int = 1"]
            used = self.ch.choice([used, f"{m}Sub.make(inp, n, k, flag)"])
        elif variant == "func-other":
            local += ["", "", f"class Other{u}:", "    def __init__(self, buf, size):",
                      "        self.buf = buf", "        self.size = float(buf.float().sum())"]  # fmt: skip
            used, read_in_ctor = f"{m}.make.__func__(Other{u}, inp, n, k, flag)", True
        elif variant == "patched":  # the class handed to a helper that wraps its `__init__`
            local += ["", "", f"def _patch{u}(c):", "    orig = c.__init__", "",
                      "    def __init__(self, *a, **kw):", "        orig(self, *a, **kw)",
                      "        self.size = float(self.buf.float().sum())", "",
                      "    c.__init__ = __init__", "", "", f"_patch{u}({m})"]  # fmt: skip
            read_in_ctor = True
        elif variant == "namespace-other":  # the classmethod object bound to another class
            local += ["", "", f"class Other{u}:", "    def __init__(self, buf, size):",
                      "        self.buf = buf", "        self.size = float(buf.float().sum())"]  # fmt: skip
            used = f'getattr({m}, "__dict__")["make"].__get__(None, Other{u})(inp, n, k, flag)'
            read_in_ctor = True
        body = [ALLOC_IN_CLASS, f"m{u} = {used}", f"out.append(m{u}.size)", f"{x} = m{u}.buf"]
        body += self.use_field(x, b)
        body.append(f"out.append({x}.clone())")
        differs = self.use != "full" or read_in_ctor
        if variant == "bound":  # written in full in `make`: nothing later sees the zeros
            differs = {"full": False, "part": self.use != "full", "read": True}[use]
        return Piece([], local, body, [], tags, differs)

    def use_field(self, get: str, b: Buf) -> list[str]:
        """Write a holder's field in full or in part, or read it and then write the buffer."""
        c = self.const(b)
        self.use = self.ch.choice(["full", "part", "read-then-write"])
        return {
            "full": [f"{get}.fill_({c})"],
            "part": [f"{get}[1:] = {c}"],
            "read-then-write": [f"out.append({get}.float().sum())", f"{b.name}.fill_({c})"],
        }[self.use]

    def field_differs(self, aliased: bool) -> bool:
        """With the field the buffer itself, only a full write hides the zeros; with the field
        another tensor, only writing the buffer directly does."""
        return self.use != "full" if aliased else self.use != "read-then-write"

    # -- SimpleNamespace, dict, list, tuple ------------------------------------------------------

    def shape_holder(self, u: str, b: Buf) -> Piece:
        x, s, v = b.name, f"{b.src}.clone()", f"o{u}"
        kind = self.ch.choice(["namespace", "dict", "list", "tuple"])
        tags = {f"wp-container-{kind}"}
        make, get, rebind = {
            "namespace": (f"types.SimpleNamespace(buf={x}, n=1)", f"{v}.buf", f"{v}.buf = {s}"),
            "dict": (f"{{'buf': {x}, 'n': 1}}", f"{v}['buf']", f"{v}.update(buf={s})"),
            "list": (f"[{x}, {s}]", f"{v}[0]", f"{v}.reverse()"),
            "tuple": (f"({x}, {s})", f"{v}[0]", f"{v} = {v}[::-1]"),
        }[kind]
        body = [f"{v} = {make}"]
        aliased = True
        if self.ch.chance(30):
            body.append(rebind)
            tags.add("wp-container-rebound")
            aliased = False
        if kind in ("list", "tuple") and self.ch.chance(30):
            body.append(f"first{u}, second{u} = {v}")
            pick, is_first = self.ch.choice([(f"first{u}", True), (f"second{u}", False)])
            body += self.use_field(pick, b)
            tags.add("wp-container-unpacked")
            return Piece([], [], body, [], tags, self.field_differs(aliased == is_first))
        body += self.use_field(get, b)
        return Piece([], [], body, [], tags, self.field_differs(aliased))
