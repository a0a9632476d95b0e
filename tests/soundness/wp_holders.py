"""Holders made in the function and the ways their contents move: a dict, list, tuple or
SimpleNamespace bound to two names, stored into another holder, changed through an alias
(`e = d; e['a'] = other`), a negative index, `del`, a computed key, `pop`, `get`, unpacking, a
closure that stores into it, a loop that rebinds it, a store into one of two dicts both handed
on, read through the other, through a list of both or through a name rebound to the first
(analysis/dataflow/holders.py). Each variant says whether the path finally used names the
buffer; `use_field` then writes it in full, in part, or reads it first, so each variant comes
with its near-miss."""

from __future__ import annotations

from tests.soundness.wp_blocks import Buf, Piece
from tests.soundness.wp_objects import ObjectShapes

VARIANTS = (
    "dict-alias-store", "dict-alias-rebind", "dict-other-store", "list-neg-store", "list-del",
    "list-neg-load", "tuple-unpack", "nested", "get", "private-list-store", "holder-in-list",
    "namespace-alias", "computed-key", "pop", "loop-rebind", "del-key", "closure",
    "comprehension", "setdefault", "update", "alias-other-key", "other-holder-store",
)  # fmt: skip


class HolderShapes(ObjectShapes):
    """`shape_holders`: one variant of VARIANTS per piece (mixed into the whole-program shapes)."""

    def shape_holders(self, u: str, b: Buf) -> Piece:
        x, s, s2 = b.name, f"{b.src}.clone()", f"({b.src} + 3)"
        d, e = f"d{u}", f"e{u}"
        variant = self.ch.choice(VARIANTS)
        pick = self.ch.chance(50)
        body: list[str]
        if variant == "dict-alias-store":
            body, get, aliased = [f"{d} = {{}}", f"{e} = {d}", f"{d}['a'] = {x}"], f"{e}['a']", True
        elif variant == "dict-alias-rebind":
            body = [f"{d} = {{'a': {x}}}", f"{e} = {d}", f"{e}['a'] = {s}"]
            get, aliased = f"{d}['a']", False
        elif variant == "dict-other-store":
            body = [f"{d} = {{'a': {x}}}", f"{e} = {{}}", f"{e}['a'] = {s}"]
            get, aliased = f"{d}['a']", True
        elif variant == "list-neg-store":
            body = [f"{d} = [{s}, {x}]", f"{e} = {d}", f"{e}[-1] = {s2}"]
            get, aliased = f"{d}[1]", False
        elif variant == "list-del":
            body = [f"{d} = [{s}, {x}, {s2}]", f"{e} = {d}", f"del {e}[0]"]
            get, aliased = (f"{d}[0]", True) if pick else (f"{d}[1]", False)
        elif variant == "list-neg-load":
            body = [f"{d} = [{s}, {x}]", f"{e} = {d}"]
            get, aliased = (f"{e}[-1]", True) if pick else (f"{e}[-2]", False)
        elif variant == "tuple-unpack":
            first = f"({x}, {s})" if pick else f"({s}, {x})"
            body, get, aliased = [f"{d} = {first}", f"p{u}, q{u} = {d}"], f"p{u}", pick
        elif variant == "nested":
            body = [f"t{u} = types.SimpleNamespace(a={x})", f"{d} = {{'t': t{u}}}"]
            if pick:
                body.append(f"t{u}.a = {s}")
            get, aliased = f"{d}['t'].a", not pick
        elif variant == "get":
            body = [f"{d} = dict(a={x})"]
            get, aliased = (f"{d}.get('a')", True) if pick else (f"{d}.get('b', {s})", False)
        elif variant == "private-list-store":
            body = [f"{d} = [{s}, {s2}]", f"{d}[1] = {x}"]
            get, aliased = (f"{d}[1]", True) if pick else (f"{d}[0]", False)
        elif variant == "holder-in-list":
            body = [f"{d} = {{}}", f"{e} = [{d}]", f"{d}['a'] = {x}"]
            get, aliased = f"{e}[0]['a']", True
        elif variant == "namespace-alias":
            body = [f"{d} = types.SimpleNamespace()", f"{e} = {d}", f"{d}.a = {x}"]
            get, aliased = f"{e}.a", True
        elif variant == "computed-key":
            body = [f"{d} = {{'a': {s}, 'b': {x}}}", f"k{u} = 'b' if {d} else 'a'"]
            get, aliased = f"{d}[k{u}]", True
        elif variant == "pop":
            body = [f"{d} = {{'a': {x}}}", f"v{u} = {d}.pop('a')"]
            get, aliased = f"v{u}", True
        elif variant == "loop-rebind":
            body = [f"for i{u} in range(2):", f"    {d} = {{'a': {x} if i{u} == 0 else {s}}}"]
            get, aliased = f"{d}['a']", False
        elif variant == "del-key":
            body = [f"{d} = {{'a': {x}}}", f"{e} = {d}", f"del {e}['a']", f"{d}['a'] = {s}"]
            get, aliased = f"{d}['a']", False
        elif variant == "closure":
            body = [
                f"{d} = {{'a': {s}}}",
                f"def put{u}():",
                f"    {d}['a'] = {x}",
                f"put{u}()",
            ]
            get, aliased = f"{d}['a']", True
        elif variant == "comprehension":
            items = f"({x}, {s})" if pick else f"({s}, {x})"
            body, get, aliased = [f"{d} = [t for t in {items}]"], f"{d}[0]", pick
        elif variant == "setdefault":
            body = [f"{d} = {{'a': {x}}}"]
            get, aliased = (
                (f"{d}.setdefault('a', {s})", True)
                if pick
                else (f"{d}.setdefault('b', {s})", False)
            )
        elif variant == "alias-other-key":  # the alias stores a key the holder never had
            body = [f"{d} = {{'a': {s}}}", f"{e} = {d}", f"{e}['b'] = {x}"]
            get, aliased = (f"{d}['b']", True) if pick else (f"{d}['a']", False)
        elif variant == "other-holder-store":  # two dicts, both handed on, one gets the buffer
            body = [f"{d} = {{}}", f"{e} = {{'a': {s}}}", f"w{u} = [{d}, {e}]", f"{d}['a'] = {x}"]
            how = self.ch.choice(["other", "container", "rebound"])
            if how == "rebound":  # `e` is then `d`: one dict
                body.insert(3, f"{e} = {d}")
            get = f"w{u}[0]['a']" if how == "container" else f"{e}['a']"
            aliased = how != "other"
        else:  # update
            body = [f"{d} = {{'a': {x}}}", f"{d}.update(a={s})" if pick else f"{d}.update(b={s})"]
            get, aliased = f"{d}['a']", not pick
        body += self.use_holder(get, b, u)
        differs = self.field_differs(aliased)
        return Piece([], [], body, [], {f"wp-holders-{variant}"}, differs)

    def use_holder(self, get: str, b: Buf, u: str) -> list[str]:
        """As `use_field`, with the read also spelled as a plain tensor method (`.sum()`) bound
        to a name and handed on only after the write: no unknown call runs in between."""
        lines = self.use_field(get, b)
        if self.use == "read-then-write" and self.ch.chance(50):
            lines = [f"s{u} = {get}.sum()", lines[1], f"out.append(s{u})"]
        return lines
