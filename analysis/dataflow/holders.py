"""Holders made in the function: dict, list and tuple displays, `dict(k=...)`,
`types.SimpleNamespace(k=...)`, followed like records (plain dataclasses).

A holder built by a display or one of those constructors is a new object: only the name it is
bound to reaches it, so the paths under that name (`d['a']`, `bufs[0]`, `ns.a`) are the buffer,
and any use of the name as a whole hands the holder on (Effects._owner_used). Two per-function
facts decide what more is sound (`holder_names`):

- a *sequence* name is bound only to list or tuple displays and indexed only by non-negative
  integer literals, never through a method, `del name[i]` or `+=`: `bufs[-1]` or `bufs.pop(0)`
  would reach an element under an index the paths do not spell. Only sequence names get paths
  from a display, and `x, y = bufs` unpacks them element by element.
- a *private* name is bound only to new holders and used only through constant paths
  (`d['a']`, `d.get('a')`, `ns.a`): no other name ever reaches its object, so storing the buffer
  into it later (`d['a'] = buf`) is not an escape.

A store into a holder that may have other names (`o = self.h; o['a'] = buf`) leaves an exposed
slot (`EXPOSED` + `['a']`): a later load of the same slot through any path the analysis does not
track (`self.h['a']`) may be the buffer. Where the sites that made the object stored into are
known (`origins`: a holder name's own displays, Context.object_origins in lifecycle programs),
the exposed slot carries them, and a load through a place made only at other sites is not it.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable

from zeroopt.analysis import semantics as api
from zeroopt.analysis.dataflow.append_lists import GROWING, AppendLists, append_names, memoized
from zeroopt.analysis.dataflow.effects import Effects
from zeroopt.analysis.dataflow.places import _KEY_PART, ANY_ITEM, _root, _under, place_key
from zeroopt.analysis.resolve import child_nodes, parameter_names, walk
from zeroopt.analysis.state import EXPOSED, MAYBE, MAYBE_COPY, Ref, State, View, evolve

_INT_ITEM = re.compile(r"\[-?\d+\]")
_CTORS = {"types.SimpleNamespace": "ns", "builtins.dict": "map"}


def _nonneg_int(e: ast.expr) -> bool:
    return isinstance(e, ast.Constant) and type(e.value) is int and e.value >= 0


def _const_key(e: ast.expr) -> bool:
    return isinstance(e, ast.Constant) and (type(e.value) is str or _nonneg_int(e))


def _kind_of(value: ast.expr, qualify: Callable[[ast.expr], str | None]) -> str | None:
    """`seq`, `map` or `ns` for a new holder whose contents the source spells out."""
    if isinstance(value, ast.List | ast.Tuple):
        if any(isinstance(x, ast.Starred) for x in value.elts):
            return None
        return "seq" if isinstance(value, ast.List) else "tup"
    if isinstance(value, ast.Dict):
        return "map" if all(k is not None and _const_key(k) for k in value.keys) else None
    if isinstance(value, ast.Call) and not value.args:
        kind = _CTORS.get(qualify(value.func) or "")
        if kind and all(k.arg is not None for k in value.keywords):
            return kind
    return None


def holder_names(
    fn: ast.AST, qualify: Callable[[ast.expr], str | None], escaping: frozenset[str]
) -> tuple[dict[str, str], frozenset[str]]:
    """(name -> kind for names bound only to new holders of one kind, with sequence names that
    break the index discipline left out; the private ones). Names in `escaping` (globals,
    closure cells) are never holders."""
    if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
        return {}, frozenset()
    cached: tuple[dict[str, str], frozenset[str]] | None = getattr(fn, "_zeroopt_holders", None)
    if cached is not None:
        return cached
    parent: dict[int, ast.AST] = {}
    kinds: dict[str, set[str | None]] = {}
    bad: set[str] = set(escaping)
    whole: set[str] = set()
    bad.update(parameter_names(fn))
    nodes = list(walk(fn.body))
    for node in nodes:
        for child in child_nodes(node):
            parent[id(child)] = node
        if isinstance(
            node,
            ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda | ast.GeneratorExp,
        ):
            # A name a nested scope mentions may be reached from code that runs at any time.
            bad.update(n.id for n in walk([node]) if isinstance(n, ast.Name))
        if (isinstance(node, ast.Name) and node.id in api.FRAME_NAMES) or (
            isinstance(node, ast.Attribute) and node.attr in api.FRAME_NAMES
        ):
            return {}, frozenset()  # `locals()`, `vars()`: every local reached by name
        for bound in ("name", "asname", "rest"):  # def, class, import, except, match
            value = getattr(node, bound, None)
            if isinstance(value, str):
                bad.add(value.split(".")[0])
    for node in nodes:
        if not isinstance(node, ast.Name):
            continue
        name, up = node.id, parent.get(id(node))
        if isinstance(node.ctx, ast.Store):
            value = None
            if (isinstance(up, ast.Assign) and up.targets == [node]) or (
                isinstance(up, ast.AnnAssign) and up.target is node
            ):
                value = up.value
            kind = _kind_of(value, qualify) if value is not None else None
            kinds.setdefault(name, set()).add(kind)
            continue
        if isinstance(node.ctx, ast.Del):
            continue
        if isinstance(up, ast.Subscript) and up.value is node:
            if not _const_key(up.slice) or isinstance(up.ctx, ast.Del):
                kinds.setdefault(name, set()).add("!seq")
                whole.add(name)
            continue
        if isinstance(up, ast.Attribute) and up.value is node:
            kinds.setdefault(name, set()).add("!seq")
            call = parent.get(id(up))
            getter = (
                up.attr == "get"
                and isinstance(call, ast.Call)
                and call.func is up
                and 1 <= len(call.args) <= 2
                and not call.keywords
                and _const_key(call.args[0])
            )
            if not getter and (up.attr.startswith("__") or up.attr == "get"):
                whole.add(name)
            elif getter:
                kinds[name].add("get")
            else:
                kinds[name].add("attr")
            continue
        if isinstance(up, ast.Compare) and all(isinstance(o, ast.Is | ast.IsNot) for o in up.ops):
            continue
        whole.add(name)
    found: dict[str, str] = {}
    for name, ks in kinds.items():
        made = {k for k in ks if k in ("seq", "tup", "map", "ns")}
        if name in bad or None in ks or len(made) != 1:
            continue
        kind = made.pop()
        if kind in ("seq", "tup") and "!seq" in ks:
            continue
        if ("attr" in ks and kind != "ns") or ("get" in ks and kind != "map"):
            whole.add(name)  # `d.keys()`, `ns.get(...)`: a method of the holder
        found[name] = kind
    private = frozenset(n for n in found if n not in whole)
    result = (found, private)
    setattr(fn, "_zeroopt_holders", result)  # noqa: B010 - a memo on the tree, as records.py
    return result


_EAGER = frozenset({"sum", "list", "tuple", "set", "frozenset", "dict", "any", "all", "min",
                    "max", "sorted"})  # fmt: skip


def late_names(fn: ast.AST) -> tuple[tuple[int, tuple[range, ...], frozenset[str]], ...]:
    """(line, lines of the loops around it, names read) of each generator expression of `fn` that no builtin
    consumes where it is made (`sum(x for ...)`): it runs when stepped and looks each name up
    then, so a buffer bound or stored under one of them after it was made is reachable from it."""
    cached: tuple[tuple[int, tuple[range, ...], frozenset[str]], ...] | None = getattr(
        fn, "_zeroopt_late", None
    )
    if cached is not None:
        return cached
    eager: set[int] = set()
    loops: dict[int, list[range]] = {}
    found: list[tuple[int, tuple[range, ...], frozenset[str]]] = []
    for node in walk([fn]):
        if isinstance(node, ast.For | ast.AsyncFor | ast.While):
            lines = range(node.lineno, (node.end_lineno or node.lineno) + 1)
            for n in walk([node]):
                if isinstance(n, ast.GeneratorExp):
                    loops.setdefault(id(n), []).append(lines)
        if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
            f = node.func
            if (isinstance(f, ast.Name) and f.id in _EAGER) or (
                isinstance(f, ast.Attribute) and f.attr == "join"
            ):
                eager.add(id(node.args[0]))
        elif isinstance(node, ast.GeneratorExp) and id(node) not in eager:
            names = frozenset(n.id for n in walk([node]) if isinstance(n, ast.Name))
            found.append((node.lineno, tuple(loops.get(id(node), ())), names))
    result = tuple(found)
    setattr(fn, "_zeroopt_late", result)  # noqa: B010 - a memo on the tree
    return result


def _item_hit(sub: ast.expr, items: list[str]) -> bool:
    """Whether a load `X[sub]` may reach an item slot stored under another name for X."""
    if not items:
        return False
    if "[*]" in items:
        return True
    if isinstance(sub, ast.Constant) and type(sub.value) is str:
        return f"[{sub.value!r}]" in items
    if isinstance(sub, ast.Constant) and type(sub.value) is int:
        return f"[{sub.value}]" in items
    return True  # a computed key (`-1`, `i`, `True`, `1.0`) may equal any of them


def slot(place: str) -> str:
    """The last step of an access path: `.a` of `x.y.a`, `['k']` of `x['k']`."""
    last = None
    for m in _KEY_PART.finditer(place):
        last = m
    if last is not None and last.end() == len(place):
        return place[last.start() :]
    return place[place.rfind(".") :]


def exposed(key: str, labels: frozenset[str] | None = None) -> str:
    """The may-path of an exposed slot (`.a`, `['k']`): of an object made at one of `labels`'
    sites (object_origins), or of any object (None)."""
    if labels is None:
        return EXPOSED + key
    return EXPOSED + "{" + ",".join(sorted(labels)) + "}" + key


def exposures(state: State) -> tuple[tuple[frozenset[str] | None, str], ...]:
    """(labels or None, slot) of each exposed slot of the state (computed once per state)."""
    return state.exposures


def touches_exposed(slots: frozenset[str], state: State) -> bool:
    """Whether a node that loads or stores these slots (`.a`, `[` for any item) may reach an
    exposed slot of the state: then it is not inert."""
    for _, s in exposures(state):
        if (s.startswith("[") and "[" in slots) or s in slots or "." in slots:
            return True
    return False


def node_slots(node: ast.AST) -> frozenset[str]:
    """The slots a node loads or stores (`.__dict__` and the like as `.`: any attribute)."""
    out: set[str] = set()
    for sub in walk([node]):
        if isinstance(sub, ast.Attribute):
            out.add("." if sub.attr.startswith("__") else f".{sub.attr}")
        elif isinstance(sub, ast.Subscript):
            out.add("[")
    return frozenset(out)


class Holders(Effects):
    """Holders made here (see the module docstring)."""

    def _holders(self) -> tuple[dict[str, str], frozenset[str]]:
        scope = self.ctx.scope
        return holder_names(
            scope.node,
            lambda e: self.ctx.resolver.qualified(scope, e),
            frozenset(self.ctx.escape_on_bind)
            | frozenset(scope.captured | scope.global_names | scope.nonlocal_names),
        )

    def _append_lists(self) -> AppendLists:
        scope = self.ctx.scope
        cached = memoized(scope.node)
        if cached is not None:
            return cached
        return append_names(
            scope.node,
            lambda e: self.ctx.resolver.qualified(scope, e),
            frozenset(self.ctx.escape_on_bind)
            | frozenset(scope.captured | scope.global_names | scope.nonlocal_names),
        )

    def append_list(self, name: str) -> bool:
        """A list made here that only `append`/`extend`/`+=` change and only sequence readers
        read (append_lists.py)."""
        return name in self._append_lists().names

    def length_only(self, e: ast.Name) -> bool:
        """`len(xs)`, `if xs:` of such a list: no use of its items."""
        return id(e) in self._append_lists().quiet

    def grow_list(self, e: ast.Call) -> bool:
        """`xs.append(v)` / `xs.extend([a, b])` of such a list: each item the buffer (or a view
        of it) is in the list from now on, at the path `xs[*]` (any item): the list only grows,
        so it stays there until `xs` is bound again. False: not such a call."""
        func = e.func
        if not (
            isinstance(func, ast.Attribute)
            and func.attr in GROWING
            and isinstance(func.value, ast.Name)
            and self.append_list(func.value.id)
        ):
            return False
        arg = e.args[0]
        items = [arg]
        if func.attr == "extend" and isinstance(arg, ast.List | ast.Tuple):
            items = arg.elts
        self.grow(func.value.id, items, e)
        return True

    def grow(self, name: str, items: list[ast.expr], node: ast.AST) -> None:
        """Items added to the end of the list `name`, in order (grow_list, `xs += [a, b]`)."""
        key = name + ANY_ITEM
        for item in items:
            ref = self._eval_value(item)
            if ref is None:
                continue
            held = self.st.must_map().get(key)
            if held is not None and held.view is View.SELF and held.region is None:
                continue  # the buffer itself is an item already: what a reader surely reads
            self.bind(key, ref, node)

    def _private_names(self) -> frozenset[str]:
        """Names only they reach the object of: private holders, and lists that only grow
        (append_lists.py: no other name, call or store ever gets them)."""
        private, grown = self._holders()[1], self._append_lists().names
        return private | grown if grown else private

    def private_root(self, root: str) -> bool:
        """Only this name reaches the object: a store into it is no escape."""
        return root in self.ctx.private_roots or root in self._private_names()

    def late_reader(self, node: ast.AST, name: str) -> None:
        """The buffer is now reachable through `name`, which a generator expression made in
        this function reads when it is stepped (late_names): whoever steps it may read it."""
        if not self.st.live or self.st.full:
            return
        line = getattr(node, "lineno", self.line)
        for made, loops, names in late_names(self.ctx.scope.node):
            # made before, or in a loop around the binding: an earlier turn may have made it
            if name in names and (made <= line or any(line in lines for lines in loops)):
                self.lost(
                    node,
                    f"reachable through `{name}`, which a generator expression made at line {made} reads when it runs",
                )
                return

    def private_item(self, target: ast.Subscript) -> bool:
        """`d['a'] = x` / `bufs[0] = x` into a private holder: a store of x, never a copy."""
        v = target.value
        if not (isinstance(v, ast.Name) and v.id in self._holders()[1]):
            return False  # a tuple or a namespace raises instead (TypeError)
        return self._holders()[0].get(v.id) in ("seq", "map") and _const_key(target.slice)

    def rebind_elsewhere(self, component: str, keep: str, owner: str = "") -> None:
        """As Effects.rebind_elsewhere, but a private holder is reached by its one name only:
        a store into it re-points nothing else, a store through another name never its paths."""
        private = self._private_names()
        if owner in private:
            return

        def own_slot(k: str) -> bool:  # `d['a']`, not `d['a'].x`: that object has other names
            return _root(k) in private and len(_root(k)) + len(slot(k)) == len(k)

        before = {k: v for k, v in self.st.must if own_slot(k)}
        fresh = frozenset(k for k in self.st.fresh if own_slot(k))
        super().rebind_elsewhere(component, keep, owner)
        if before or fresh:
            must = self.st.must_map()
            must.update(before)
            self.st = evolve(self.st, fresh=self.st.fresh | fresh).with_must(must)

    def shift_items(self, keep: str, owner: str = "") -> None:
        """`x[-1] = v`, `del x[0]`, `x[i:j] = v`: an item of any list may have been replaced or
        moved to another index, under every name for the list. Writes through what was an item
        prove nothing now, a read through any index of it may be the buffer (`x[*]`), and which
        element a later read sees is not known: no longer provably unwritten."""
        must = len(self.st.must)
        self.rebind_elsewhere("[", keep, owner)
        if len(self.st.must) != must and not self.conditional:
            self.st = evolve(self.st, touched=True)
        private = self._holders()[1]
        moved = {
            _INT_ITEM.sub("[*]", p)
            for p in self.st.may
            if not p.startswith(EXPOSED) and _root(p) not in private and _INT_ITEM.search(p)
        }
        if moved:  # `del x[0]`: what was `x[1]` is `x[0]` now, under every name for x
            self.st = evolve(self.st, may=self.st.may | moved)

    def sequence_name(self, name: str) -> bool:
        return self._holders()[0].get(name) in ("seq", "tup")

    def origins(self, key: str) -> frozenset[str] | None:
        """Labels of the sites whose new objects the place `key` may hold; None: any object.
        A holder name (bound only to new holders) holds only what its own displays made."""
        known = self.ctx.object_origins.get(key)
        if known is not None:
            return known
        return frozenset({key}) if key in self._holders()[0] else None

    def expose(self, place: str) -> None:
        """The buffer is now in `place`, whose object other names may reach: tied to the sites
        that may have made that object, where they are known. Only a private holder's own slots
        are private: `d['i']['a']` stores into an object `d['j']` or another name may also hold."""
        root = _root(place)
        s = slot(place)
        own = len(root) + len(s) == len(place)  # `d['a']`, not `d['i']['a']`
        if (
            root != place
            and root not in self.ctx.private_roots
            and not (own and self.private_root(root))
        ):
            labels = self.origins(place[: len(place) - len(s)])
            self.st = evolve(self.st, may=self.st.may | {exposed(s, labels)})

    def exposed_load(self, e: ast.Attribute | ast.Subscript) -> Ref | None:
        """An untracked load that may reach an exposed slot: maybe the buffer. Not where the
        object loaded from and the object the slot was exposed on were made at disjoint sites
        (two holder names, two names bound only to constructor calls, ...)."""
        found = exposures(self.st)
        if not found:
            return None
        base = place_key(e.value)
        mine = self.origins(base) if base is not None else None
        slots = [s for labels, s in found if labels is None or mine is None or labels & mine]
        if isinstance(e, ast.Attribute):
            hit = f".{e.attr}" in slots or (
                e.attr.startswith("__") and any(s.startswith(".") for s in slots)
            )
        else:
            hit = _item_hit(e.slice, [s for s in slots if s.startswith("[")])
        return MAYBE_COPY if hit else None  # a write through it may be of the buffer

    # --- building and taking apart ------------------------------------------------------------
    def holder_contents(self, value: ast.expr, tkey: str) -> list[tuple[str, ast.expr]] | None:
        """(path suffix, element) of a new holder bound to `tkey`, or None: not one we follow."""
        qualify = lambda f: self.ctx.resolver.qualified(self.ctx.scope, f)  # noqa: E731
        kind = _kind_of(value, qualify)
        if kind in ("seq", "tup"):
            if not (self.sequence_name(tkey) or self.append_list(tkey)):
                return None
            assert isinstance(value, ast.List | ast.Tuple)
            return [(f"[{i}]", x) for i, x in enumerate(value.elts)]
        if kind == "map" and isinstance(value, ast.Dict) and "." not in tkey and "[" not in tkey:
            pairs = []
            for k, v in zip(value.keys, value.values, strict=True):
                assert isinstance(k, ast.Constant)
                pairs.append((f"[{k.value!r}]", v))
            return pairs
        if kind is not None and isinstance(value, ast.Call):
            fmt = "[{!r}]" if kind == "map" else ".{}"
            return [(fmt.format(k.arg), k.value) for k in value.keywords]
        return None

    def take_apart(
        self, contents: list[tuple[str, ast.expr]]
    ) -> list[tuple[str, Ref | None, bool]]:
        """What each element carries into the holder: the buffer, or paths of a holder of it."""
        carried: list[tuple[str, Ref | None, bool]] = []
        for suffix, arg in contents:
            # Every element is evaluated, in order; `{"a": x, "a": y}` keeps the last.
            carried = [c for c in carried if c[0] != suffix and not _under(c[0], suffix)]
            akey = place_key(arg)
            holder = akey is not None and self.lookup(akey) is None and self._holds(akey)
            ref = None if holder else self._eval_value(arg)
            fresh = akey is not None and akey in self.st.fresh
            if ref is not None or fresh:
                carried.append((suffix, ref, fresh))
            if holder and akey is not None:
                carried += [(f"{suffix}{s}", r, f) for s, r, f in self._carry(akey)]
        return carried

    def _holds(self, key: str) -> bool:
        raise NotImplementedError

    def _carry(self, key: str) -> list[tuple[str, Ref | None, bool]]:
        raise NotImplementedError

    def get_call(self, e: ast.Call) -> tuple[bool, Ref | None]:
        """`d.get('a')` / `d.get('a', default)` on a dict made here: the load `d['a']` (or the
        default, which it then may be)."""
        func = e.func
        if not (
            isinstance(func, ast.Attribute)
            and func.attr == "get"
            and isinstance(func.value, ast.Name)
            and self._holders()[0].get(func.value.id) == "map"
            and 1 <= len(e.args) <= 2
            and not e.keywords
            and _const_key(e.args[0])
        ):
            return False, None
        arg = e.args[0]
        assert isinstance(arg, ast.Constant)
        key = f"{func.value.id}[{arg.value!r}]"
        if self.owns(key):
            return False, None  # a holder inside: the generic handling (a use as a whole)
        ref = self.lookup(key)
        default = self.eval(e.args[1]) if len(e.args) == 2 else None
        if default is not None or (ref is not None and len(e.args) == 2):
            return True, MAYBE if (ref or default) else None
        return True, ref

    def unpack_holder(self, s: ast.Assign) -> bool:
        """`x, y = bufs` for a sequence name: each name gets its element."""
        if len(s.targets) != 1 or not isinstance(s.targets[0], ast.Tuple | ast.List):
            return False
        names = s.targets[0].elts
        v = s.value
        if not (
            isinstance(v, ast.Name)
            and self.sequence_name(v.id)
            and all(isinstance(t, ast.Name) for t in names)
            and len({t.id for t in names if isinstance(t, ast.Name)}) == len(names)
        ):
            return False
        taken = []
        for i in range(len(names)):
            key = f"{v.id}[{i}]"
            taken.append((self.lookup(key), self._carry(key) if self.owns(key) else []))
        for t, (ref, carried) in zip(names, taken, strict=True):
            assert isinstance(t, ast.Name)
            self.assign(t, ref, s)
            for suffix, r, fresh in carried:
                place = t.id + suffix
                if r is not None and not self.conditional:
                    self.bind(place, r, s)
                else:
                    self.st = evolve(self.st, may=self.st.may | {place})
                del fresh
        return True

    def assign(self, target: ast.expr, ref: Ref | None, stmt: ast.AST) -> None:
        raise NotImplementedError
