"""The `returned` shape (`--wp-shapes returned`): a function that allocates a zeros buffer,
perhaps writes part of it, and returns it; one to three callers that each do something else
with it (write it in full, in part, under a flag, read it first, never read it, return it again
to f, hand it to a helper of `lib` that writes or reads it); and the traps of a closed world
over callers: the allocator referenced as a value (passed to a helper of `lib`, bound to another
name, wrapped by `functools.partial`, named in `__all__` or looked up in `globals()`), a public
name, a decorator, a view or a tuple returned instead of the buffer, recursion, a def nested in
its caller, a method called through `self`. Judged at the callers (analysis/returned.py).
`public-*` traps make the allocator public, where one caller that reads it unwritten is enough
for `unsafe` (analysis/returned_reads.py): a public method called through `self`
(`public-method`), a public function called from lib.py (`public-module`), and the near miss of
a public method whose callers' `self.mk(...)` runs a subclass's override that fills the buffer
(`public-override`); a public method beside a class made at run time from a mixin and
`type(obj)` (`public-made`), and its near miss where the mixin overrides the allocator with a
version that fills the buffer and every caller runs on a wrapped object (`public-made-override`).

`slot*` traps return the buffer as one slot of a tuple, list or dict display (followed by
analysis/returned_slots.py): taken out by unpacking, a literal index or key (`slot`), through a
second function that returns the display as it is (`slot-up`); near misses: a starred unpacking,
an index by a variable, the buffer in two slots with the other one read, the display handed to a
reader in `lib`.

`method-*` traps call a private method from a subclass (`method-sub`), through an override that
takes the base's buffer by `super()` (`method-super`, some overrides reading it), as a value
wrapped by `functools.partial` (`method-callback`), or on a parameter (`method-param`);
`method-names-*` look attributes up by a computed name whose possible names the syntax shows (a
loop over literals, a split string, an f-string head): none of them the method
(`method-names-miss`), or the method spelled by a concatenation or a prefix (`method-names-hit`).
`module-caller` puts one caller in lib.py of the multimodule program, importing the allocator
from main.py when it runs (`MAIN_IMPORT`, rewritten by whole_program.py: an alias, the name, the
module, or the name wrapped by `functools.partial`); in one module the import becomes a binding
of the same module's name (or, for the module form, a namespace made from `globals()`: the
program runs as no registered module, so `sys.modules[__name__]` may be another program's).
"""

from __future__ import annotations

import re

from tests.soundness.wp_blocks import ALLOC_IN_CLASS, Blocks, Buf, Piece, ind

CALLERS = ("full", "part", "flag", "read-first", "discard", "return-again", "lib-full",
           "lib-read", "full-then-read")  # fmt: skip
# Behaviours that read an element no write covers (of a fresh buffer, or one whose first row
# the allocator wrote): "flag" when `flag` is false, "return-again" when f reads it.
_READS_UNWRITTEN = {"part", "flag", "read-first", "lib-read"}
TRAPS = ("none", "none", "none", "none", "value-lib", "alias", "partial", "all", "string",
         "public", "decorated", "view", "tuple", "tuple-unpacked", "recursion", "nested",
         "method", "method", "chained", "globals-handed", "slot", "slot", "slot", "slot-up",
         "slot-starred", "slot-var-index", "slot-twice", "slot-handed", "method-sub",
         "method-super", "method-callback", "method-param", "module-caller",
         "module-caller", "method-names-miss", "method-names-hit", "public-method",
         "public-override", "public-module", "public-module", "public-made",
         "public-made-override")  # fmt: skip
_PUBLIC = (
    "public",
    "public-method",
    "public-override",
    "public-module",
    "public-made",
    "public-made-override",
)
# A caller in another module (lib.py of the multimodule program) imports the allocator from
# main.py inside a function; in one module the import is a binding of the same module's name.
MAIN_IMPORT = "MAIN-IMPORT"
MODULE_FORMS = ("alias", "plain", "module", "partial")


_IMPORT = re.compile(rf"{MAIN_IMPORT} (\S+)(?: as (\w+))?")


def main_import(text: str, package: bool) -> str:
    """`MAIN_IMPORT what` lines as an import from main.py (`package`) or, in one module, as a
    binding of the module's own name."""

    def one(m: re.Match[str]) -> str:
        name, alias = m.group(1), m.group(2)
        if name == "*":
            return (
                f"from . import main as {alias}"
                if package
                else (f"import types; {alias} = types.SimpleNamespace(**globals())")
            )
        if package:
            return f"from .main import {name}" + (f" as {alias}" if alias else "")
        return f"{alias} = {name}" if alias else "pass"

    return _IMPORT.sub(one, text)


class ReturnedShapes(Blocks):
    def shape_returned(self, u: str, b: Buf) -> Piece:
        x = b.name
        trap = self.ch.choice(list(TRAPS))
        tags = {f"wp-returned-{trap}"}
        mk = f"mk{u}" if trap in _PUBLIC else f"_mk{u}"
        in_class = (
            "method",
            "public-method",
            "public-override",
            "public-made",
            "public-made-override",
        )
        method = trap in in_class or trap.startswith("method-")
        me = "self." if method else ""
        lines = [f"{x} = {self.alloc(b)}"]
        if self.ch.chance(30):
            lines.append(f"{x}[0] = {self.const(b)}")  # never the second row: see _caller
            tags.add("wp-returned-prewritten")
        ret = {"view": f"{x}[1:]", "tuple": f"{x}, 1", "tuple-unpacked": f"{x}, 1"}.get(trap, x)
        slot = self._slot(u, x, trap) if trap.startswith("slot") else None
        if slot is not None:
            ret = slot[0]
        params = "inp, d" if trap == "recursion" else "inp"
        head = ["if d > 0:", f"    return {mk}(inp, d - 1)"] if trap == "recursion" else []
        sig = f"self, {params}" if method else params
        maker = [f"def {mk}({sig}):", *ind([*head, *lines, f"return {ret}"])]
        if trap == "decorated":
            maker = ["@functools.wraps(print)", *maker]
        call = f"{me}{mk}(inp, 1)" if trap == "recursion" else f"{me}{mk}(inp)"
        one = {"tuple-unpacked": f"t, _ = {call}", "tuple": f"t = {call}[0]"}.get(trap)
        get = [one or f"t = {call}"]
        if slot is not None:
            get = [line.replace("CALL", f"_up{u}(inp)" if trap == "slot-up" else call)
                   for line in slot[1]]  # fmt: skip
        count = 1 if trap == "nested" else self.ch.integer(1, 3)
        kinds = [self.ch.choice(list(CALLERS)) for _ in range(count)]
        lib: list[str] = []
        names: list[str] = []
        callers: list[str] = []
        fbody: list[str] = []
        reads = False
        for i, kind in enumerate(kinds):
            c = f"_use{u}_{i}"
            tags.add(f"wp-returned-caller-{kind}")
            rest = self._caller(kind, b, f"wfull{u}_{i}", f"wread{u}_{i}", lib, names)
            inner = [*maker, *get, *rest] if trap == "nested" else [*get, *rest]
            callers += [f"def {c}({'self, ' if method else ''}inp, flag):", *ind(inner), "", ""]
            target = f"K{u}().{c}(inp, flag)" if method else f"{c}(inp, flag)"
            if trap == "chained" and i == 0:
                # A second private function between f and the caller returns it again.
                callers += [f"def _pass{u}(inp, flag):", f"    return {target}", "", ""]
                target = f"_pass{u}(inp, flag)"
            if kind == "return-again":
                after = self.ch.choice(["full", "read"])
                tags.add(f"wp-returned-again-{after}")
                r = f"r{u}_{i}"
                fbody.append(f"{r} = {target}")
                if after == "full":
                    fbody += self.full(r, b)
                fbody.append(f"out.append({r}.float().sum())")
                reads = reads or after == "read"
            else:
                fbody.append(f"out.append({target})")
                reads = reads or kind in _READS_UNWRITTEN
        extra: list[str] = []
        c0 = f"K{u}._use{u}_0" if method else f"_use{u}_0"
        if trap == "value-lib":
            lib += [f"def apply{u}(fn, a):", "    t = fn(a)", "    return t.float().sum()", "", ""]
            names.append(f"apply{u}")
            fbody.append(f"out.append(apply{u}({mk}, inp))")
            reads = True
        elif trap == "alias":
            extra = [f"other{u} = {mk}", "", ""]
            fbody.append(f"out.append(other{u}(inp).float().sum())")
            reads = True
        elif trap == "partial":
            fbody.append(f"out.append(functools.partial({mk}, inp)().float().sum())")
            reads = True
        elif trap == "all":
            extra = [f"__all__ = ['f', '{mk}']", "", ""]
        elif trap == "globals-handed":
            # f hands its module's namespace to lib, which looks the allocator up in it: split
            # over a package, lib names the allocator but never the main module.
            lib += [f"def peek{u}(g, a):", f"    return g['{mk}'](a).float().sum()", "", ""]
            names.append(f"peek{u}")
            fbody.append(f"out.append(peek{u}({c0}.__globals__, inp))")
            reads = True
        elif trap in ("slot-twice", "slot-handed"):
            # The caller reads the buffer through the other slot, or hands the display to lib.
            extra = [f"seen{u} = []", "", ""]
            if trap == "slot-handed":
                lib += [f"def peek{u}(r):", "    return r[0].float().sum()", "", ""]
                names.append(f"peek{u}")
            fbody.insert(0, f"seen{u}.clear()")  # the module may be run more than once
            fbody.append(f"out.append(sum(seen{u}))")
            reads = True
        elif trap == "slot-up":
            extra = [f"def _up{u}(inp):", f"    return {mk}(inp)", "", ""]
        elif trap == "string":
            fbody.append(f"out.append(globals()['{mk}'](inp).float().sum())")
            reads = True
        if trap in ("module-caller", "public-module"):
            fbody.append(f"out.append(lcall{u}(inp, flag))")
            reads = self._module_caller(u, mk, b, lib, names, tags) or reads
        if trap == "method-callback":
            callers += [f"def _cb{u}(self, inp):",
                        f"    return functools.partial(self.{mk}, inp)().float().sum()"]  # fmt: skip
            fbody.append(f"out.append(K{u}()._cb{u}(inp))")
            reads = True
        if trap == "method-param":
            extra = [f"def _peek{u}(obj, inp):", f"    return obj.{mk}(inp).float().sum()", "", ""]
            fbody.append(f"out.append(_peek{u}(K{u}(), inp))")
            reads = True
        if trap in ("method-names-miss", "method-names-hit"):
            extra = self._lookups(u, mk, trap == "method-names-hit")
            fbody.append(f"out.append(_look{u}(K{u}(), inp, '{mk[2:]}'))")
            reads = reads or trap == "method-names-hit"
        if trap in ("method-sub", "method-super"):
            # The callers are methods of a subclass: through `self.` (inherited), or an
            # override that takes the base's buffer through `super()` and hands it on as the
            # callers' buffer.
            sub: list[str] = []
            if trap == "method-super":
                over = [f"def {mk}(self, inp):", f"    t = super().{mk}(inp)", "    return t"]
                if self.ch.chance(50):
                    over = [f"def {mk}(self, inp):", f"    t = super().{mk}(inp)",
                            f"    out{u}.append(t.float().sum())", "    return t"]  # fmt: skip
                    extra = [f"out{u} = []", "", ""]
                    fbody.insert(0, f"out{u}.clear()")
                    fbody.append(f"out.append(sum(out{u}))")
                    reads = True
                sub = over
            fbody[:] = [line.replace(f"K{u}()", f"S{u}()") for line in fbody]
            local = [*extra, f"class K{u}:", *ind(maker), "", "",
                     f"class S{u}(K{u}):", *ind([*sub, "", *callers])]  # fmt: skip
        elif trap == "public-override":
            # The callers' `self.mk(...)` runs a subclass's override, which fills the base's
            # buffer in full: the call is not certain to run the def of the site.
            fbody[:] = [line.replace(f"K{u}()", f"S{u}()") for line in fbody]
            over = [f"def {mk}(self, inp):", f"    t = super().{mk}(inp)",
                    *ind(self.full("t", b)), "    return t"]  # fmt: skip
            local = [*extra, f"class K{u}:", *ind([*maker, "", *callers]), "", "",
                     f"class S{u}(K{u}):", *ind(over)]  # fmt: skip
            reads = False
        elif trap in ("public-made", "public-made-override"):
            # A class made at run time from a mixin and `type(obj)` (loose_lineage.py): the
            # mixin binds another name, or (the near miss) overrides the allocator with a
            # version that fills the buffer, and every caller runs on a wrapped object.
            over = [f"def other{u}(self):", "    return 0"]
            if trap == "public-made-override":
                over = [f"def {mk}(self, inp):", f"    t = super().{mk}(inp)",
                        *ind(self.full("t", b)), "    return t"]  # fmt: skip
                fbody[:] = [line.replace(f"K{u}()", f"_wrap{u}(K{u}())") for line in fbody]
                reads = False
            local = [*extra, f"class K{u}:", *ind([*maker, "", *callers]), "", "",
                     f"class Mix{u}:", *ind(over), "", "",
                     f"def _wrap{u}(obj):",
                     f"    obj.__class__ = type('Mix{u}', (Mix{u}, type(obj)), {{}})",
                     "    return obj"]  # fmt: skip
        elif method:
            local = [*extra, f"class K{u}:", *ind([*maker, "", *callers])]
        elif trap == "nested":
            local = callers
        else:
            local = [*maker, "", "", *extra, *callers]
        return Piece(lib, local, [ALLOC_IN_CLASS, *fbody], names, tags, reads)

    def _module_caller(
        self, u: str, mk: str, b: Buf, lib: list[str], names: list[str], tags: set[str]
    ) -> bool:
        """A caller `lcall<u>` in lib.py that imports the allocator from main.py when it runs
        (an alias, the name itself, the module, or the name wrapped by `functools.partial`);
        whether it reads an element nobody wrote."""
        form = self.ch.choice(list(MODULE_FORMS))
        kind = self.ch.choice(list(CALLERS))
        tags |= {f"wp-returned-module-{form}", f"wp-returned-module-caller-{kind}"}
        call = {"alias": f"g{u}(inp)", "plain": f"{mk}(inp)", "module": f"m{u}.{mk}(inp)",
                "partial": f"functools.partial(g{u}, inp)()"}[form]  # fmt: skip
        what = {"alias": f"{mk} as g{u}", "plain": mk, "module": f"* as m{u}",
                "partial": f"{mk} as g{u}"}[form]  # fmt: skip
        rest = self._caller(kind, b, f"mfull{u}", f"mread{u}", lib, names)
        if kind == "return-again":
            rest = [*self.full("t", b), "return t.float().sum()"]
        lib += [f"def lcall{u}(inp, flag):", f"    {MAIN_IMPORT} {what}", f"    t = {call}",
                *ind(rest), "", ""]  # fmt: skip
        names.append(f"lcall{u}")
        return kind in _READS_UNWRITTEN

    def _lookups(self, u: str, mk: str, hit: bool) -> list[str]:
        """`_look<u>(obj, inp, rest)`: lookups on `obj` (a `K<u>`) by names the syntax shows;
        when `hit`, one of them is `mk` and its result is read unwritten."""
        if hit:
            name = self.ch.choice([f"'_m' + '{mk[2:]}'", "f'_m{rest}'", "'_m' + rest"])
            body = [f"return getattr(obj, {name})(inp).float().sum()"]
            if self.ch.chance(50):
                body = [f"for n in ('v', {name}):", "    if hasattr(obj, n):",
                        "        return getattr(obj, n)(inp).float().sum()", "return 0"]  # fmt: skip
        else:
            names = self.ch.choice(["('v', 'w')", "'v w'.split()", "{'v': 1, 'w': 2}"])
            body = [f"found = [getattr(obj, n, 0) for n in {names}]",
                    "for k in ('v', 'w'):", "    setattr(obj, k, 1)",
                    "found.append(getattr(obj, f'cfg_{rest}', 0))",
                    "return torch.tensor(float(len(found)))"]  # fmt: skip
        return [f"def _look{u}(obj, inp, rest):", *ind(body), "", ""]

    def _slot(self, u: str, x: str, trap: str) -> tuple[str, list[str]]:
        """(what the allocator returns, the caller's lines that take the buffer out as `t`; CALL
        stands for the call): a tuple, list or dict display with the buffer in one slot."""
        if trap == "slot-starred":
            return f"{x}, 1, 2", ["t, *_ = CALL"]
        if trap == "slot-var-index":
            return f"1, {x}", ["r = CALL", "k = 1 if inp is not None else 0", "t = r[k]"]
        if trap == "slot-twice":
            return f"{x}, {x}", ["t, t2 = CALL", f"seen{u}.append(t2.float().sum())"]
        if trap == "slot-handed":
            return f"{x}, 1", ["r = CALL", "t = r[0]", f"seen{u}.append(peek{u}(r))"]
        kind = self.ch.choice(["tuple", "list", "dict"])
        if kind == "dict":
            return f'{{"n": 1, "buf": {x}}}', ["d = CALL", 't = d["buf"]']
        n = self.ch.integer(2, 3)
        at = self.ch.integer(0, n - 1)
        elts = [x if i == at else str(i) for i in range(n)]
        shown = ", ".join(elts)
        ret = f"[{shown}]" if kind == "list" else shown
        if self.ch.chance(50):
            names = ", ".join("t" if i == at else f"_o{i}" for i in range(n))
            return ret, [f"{names} = CALL"]
        return ret, ["r = CALL", f"t = r[{at}]"]

    def _caller(
        self, kind: str, b: Buf, wfull: str, wread: str, lib: list[str], names: list[str]
    ) -> list[str]:
        """A caller's statements after `t = <the allocator>()`; f appends what it returns to
        `out`. Its part writes all write the first row and never the second, so that with the
        allocator's own write of the first row some element is still unwritten."""
        c = self.const(b)
        if kind == "full":
            return [*self.full("t", b), "return t.float().sum()"]
        if kind == "full-then-read":
            return [*self.full("t", b), f"return {self.read('t')}"]
        if kind == "part":
            part = self.ch.choice(
                [[f"t[0] = {c}"], [f"t[::2] = {c}"], [f"t.narrow(0, 0, 1).fill_({c})"]]
            )
            return [*part, "return t.float().sum()"]
        if kind == "flag":
            return ["if flag:", *ind(self.full("t", b)), "return t.float().sum()"]
        if kind == "read-first":
            return [f"s = {self.read('t')}", *self.full("t", b), "return s"]
        if kind == "discard":
            return ["return 0"]
        if kind == "return-again":
            return ["return t"]
        if kind == "lib-full":
            lib += [f"def {wfull}(t):", *ind(self.full("t", b)), "", ""]
            names.append(wfull)
            return [f"{wfull}(t)", "return t.float().sum()"]
        lib += [f"def {wread}(t):", f"    return {self.read('t')}", "", ""]
        names.append(wread)
        return [f"return {wread}(t)"]
