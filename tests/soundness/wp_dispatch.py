"""Shape `dispatch`: `obj.m(buf)` where `obj`'s type is chosen at run time and several classes
define `m` with different effects (write all, write part, read first, keep it), reached through
a local, an attribute holding an instance, a list; and what breaks resolution by name: a library
object with the same method name, a class with `__getattr__`, a method stored on the instance
(`obj.m = ...`, `setattr`), an object built with an attribute `m` (`SimpleNamespace(m=...)`), a
class object as the receiver, `staticmethod` and `classmethod` defs (see analysis/dispatch.py)."""

from __future__ import annotations

from tests.soundness.wp_blocks import Blocks, Buf, Piece, ind


class DispatchShapes(Blocks):
    def _method(self, cls: str, m: str, effect: str, b: Buf) -> list[str]:
        """`class cls` with `def m(self, t)` doing `effect` to t (and `def m` variants)."""
        head = [f"class {cls}:", "    scale = 1", ""]
        if effect == "static":
            return [*head, "    @staticmethod", f"    def {m}(t):", *ind(self.full("t", b), 2)]
        if effect == "classmethod":
            return [*head, "    @classmethod", f"    def {m}(cls, t):", *ind(self.full("t", b), 2)]
        body = {
            "full": self.full("t", b),
            "part": self.part("t", b),
            "read": [f"s = {self.read('t')}", *self.full("t", b), "return s"],
            "keep": ["self.kept = t", *self.full("t", b)],
            "ignore": ["return t.shape[0]"],
            "second": [],  # `def m(self, t, u)`: writes u, not t
        }[effect]
        params = "self, t" if effect != "second" else "self, t, u"
        if effect == "second":
            body = self.full("u", b)
        return [*head, f"    def {m}({params}):", *ind(body, 2)]

    def shape_dispatch(self, u: str, b: Buf) -> Piece:
        x = b.name
        m = self.ch.choice([f"pour{u}", "pour"])  # a name shared by pieces: their defs join in
        variant = self.ch.choice(
            [
                "all-full", "all-full", "static-and-method", "classmethod", "one-part",
                "one-read", "all-read", "keep", "ignore", "attr-holder", "list-holder",
                "library-name", "getattr-class", "instance-store", "setattr", "namespace",
                "class-receiver", "class-loop", "subclass-override",
            ]
        )  # fmt: skip
        tags = {f"wp-dispatch-{variant}"}
        a, c = f"Pa{u}", f"Pb{u}"
        effects = {
            "all-full": ("full", "full"),
            "static-and-method": ("static", "full"),
            "classmethod": ("classmethod", "full"),
            "one-part": ("full", "part"),
            "one-read": ("full", "read"),
            "all-read": ("read", "read"),
            "keep": ("full", "keep"),
            "ignore": ("full", "ignore"),
        }.get(variant, ("full", "full"))
        lib = [*self._method(a, m, effects[0], b), "", "", *self._method(c, m, effects[1], b)]
        names = [a, c]
        pick = f"({a}() if flag else {c}())"
        differs = effects[1] in ("part", "read", "ignore") or effects[0] == "read"
        call = f"o{u}.{m}({x})"
        if "read" in effects:  # what a reading def returns is seen
            call = f"out.append({call})"
        body = [f"o{u} = {pick}", call]
        if variant == "attr-holder":
            lib += [
                "",
                "",
                f"class Holder{u}:",
                "    def __init__(self, impl):",
                "        self.impl = impl",
            ]
            names.append(f"Holder{u}")
            body = [f"h{u} = Holder{u}({pick})", f"h{u}.impl.{m}({x})"]
        elif variant == "list-holder":
            body = [f"objs{u} = [{a}(), {c}()]", f"objs{u}[k % 2].{m}({x})"]
        elif variant == "library-name":
            # classes of the tree define `append`; at run time the receiver is a list
            lib = [
                *self._method(a, "append", "full", b),
                "",
                "",
                *self._method(c, "append", "full", b),
            ]
            body = [f"o{u} = {a}() if flag else []", f"o{u}.append({x})"]
            differs = True
        elif variant == "getattr-class":
            lib += ["", "", f"class Lazy{u}:", "    def __getattr__(self, name):",
                    "        return lambda t: t.float().sum()"]  # fmt: skip
            names.append(f"Lazy{u}")
            body = [f"o{u} = {a}() if flag else Lazy{u}()", f"out.append(o{u}.{m}({x}))"]
            differs = True
        elif variant == "instance-store":
            body = [
                f"o{u} = {pick}",
                "if not flag:",
                f"    o{u}.{m} = lambda t: None",
                f"o{u}.{m}({x})",
            ]
            differs = True
        elif variant == "setattr":
            body = [f"o{u} = {pick}", "if not flag:", f"    setattr(o{u}, '{m}', lambda t: None)",
                    f"o{u}.{m}({x})"]  # fmt: skip
            differs = True
        elif variant == "namespace":
            body = [f"o{u} = {a}() if flag else types.SimpleNamespace({m}=lambda t: None)",
                    f"o{u}.{m}({x})"]  # fmt: skip
            differs = True
        elif variant == "class-receiver":
            # through the class, `t` binds the first parameter after `self`, not the second
            lib = [*self._method(a, m, "second", b), "", "", *self._method(c, m, "second", b)]
            body = [f"k{u} = {a} if flag else {c}", f"k{u}.{m}(k{u}(), {x}, torch.ones_like({x}))"]
            differs = True
        elif variant == "class-loop":
            lib = [*self._method(a, m, "second", b), "", "", *self._method(c, m, "second", b)]
            body = [f"for k{u} in ({a}, {c}):", f"    k{u}.{m}(k{u}(), {x}, torch.ones_like({x}))"]
            differs = True
        elif variant == "subclass-override":
            lib += ["", "", f"class Pc{u}({c}):", *self._method(f"Pc{u}", m, "part", b)[3:]]
            names.append(f"Pc{u}")
            body = [f"o{u} = {a}() if flag else Pc{u}()", f"o{u}.{m}({x})"]
            differs = True
        return Piece(lib, [], body, names, tags, differs)
