"""Statements of the random generator that look like full writes, views or plain bounds but are
not, and allocations whose buffer identity is the trap: each has fooled some analysis somewhere.
"""

from __future__ import annotations

from collections.abc import Callable

from tests.soundness.gen_model import COLS, GenState, Handle


class Traps(GenState):
    """Near misses of what the analysis proves."""

    def tricky(self, h: Handle, hs: list[Handle]) -> list[str]:
        """Constructs that look like full writes, views or plain bounds but are not: each one has
        fooled some analysis somewhere (bounds rebound or mutated between complementary slices,
        copies that look like views, writes an exception or a branch may skip, name and
        attribute aliasing)."""
        x, c = h.name, self.const(h)
        y, z = self.fresh("y"), self.fresh("z")
        self.tags.add("tricky")
        opts: list[Callable[[], list[str]]] = []
        if not self.in_inner:  # rebinding k inside a nested function would make it local there
            rebind = self.ch.choice(["k += 1", "k -= 1", "k = k + 1", "k *= 2", "k -= 2"])
            opts += [
                lambda: [f"{x}[:k] = {c}", rebind, f"{x}[k:] = {c}"],
                lambda: [f"{x}[:k] = {c}", "if flag:", "    k += 2", f"{x}[k:] = {c}"],
            ]
            if self.bump:
                opts.append(lambda: [f"{x}[:k] = {c}", "bump()", f"{x}[k:] = {c}"])
        if self.kt:
            opts.append(lambda: [f"{x}[:kt] = {c}", "kt.add_(1)", f"{x}[kt:] = {c}"])
        if self.global_k:
            opts.append(lambda: [f"{x}[:K] = {c}", "bump_global()", f"{x}[K:] = {c}"])
        opts += [
            lambda: [f"{x}.clone().fill_({c})"],
            lambda: [f"{x}.flip(0).fill_({c})"],
            lambda: [f"{x}[:-k] = {c}"],
            lambda: [f"{x}[False] = {c}"],
            lambda: [f"{x}[::2] = {c}"],
            lambda: [f"{x}[::2] = {c}", f"{x}[1::2] = {c}"],
            lambda: [f"{x}.chunk(2)[0].fill_({c})"],
            lambda: [f"{x}.unbind(0)[0].fill_({c})"],
            lambda: [f"{x}.as_strided((2,), (1,)).fill_({c})"],
            lambda: [
                "with suppress(ValueError):",
                "    if flag:",
                "        raise ValueError('skip')",
                f"    {x}.fill_({c})",
            ],
            lambda: [f"{y} = {x} if flag else {x}.clone()", f"{y}.fill_({c})"],
            lambda: [f"{y}, {z} = {x}.clone(), {x}", f"{y}.fill_({c})"],
            lambda: [f"flag and {x}.fill_({c})"],
            lambda: [f"{x}.fill_({c}) if flag else None"],
            lambda: [
                "for j in range(3):",
                "    if j == k:",
                "        break",
                "else:",
                f"    {x}.fill_({c})",
            ],
            lambda: [f"{x}.fill_({x}.float().sum())"],
            lambda: [f"{x}[:] = {x}.flip(0)"],
            lambda: [f"{y} = {x}.fill_({c})[:k]", f"{y}.fill_({self.const(h)})"],
        ]
        if h.numeric:
            opts.append(lambda: [f"{x}.copy_({x} * 0 + 1)"])
        if h.shape is not None:
            s = self.src(h)
            opts += [
                lambda: ["try:", f"    {x}.copy_({s}[:k])", "except RuntimeError:", "    pass"],
                lambda: [f"{x}.to(torch.float64).fill_(1)"],
                lambda: [
                    f"{y} = {x}",
                    f"{x} = {s}.clone()",
                    f"{x}.fill_({c})",
                    f"acc = acc + {y}.float().sum()",
                ],
                lambda: [
                    "box.t = " + x,
                    "box2 = box",
                    f"box2.t = {s}.clone()",
                    f"box.t.fill_({c})",
                ],
                lambda: [
                    f"holder['a'] = {x}",
                    f"holder['b'] = {x}.clone()",
                    "key = 'a' if flag else 'b'",
                    f"holder[key].fill_({c})",
                ],
            ]
            if h.dtype in ("float32", "int64"):
                dims = ", ".join(map(str, h.shape))
                opts += [
                    lambda: [f"torch.add({s}[:k], 1, out={x}[:k])"],
                    # out= with a smaller result resizes the buffer: only that part is written
                    lambda: [
                        f"{y} = {x}[:]",
                        f"torch.cat([{s}[:k]], out={x})",
                        f"{x}.resize_({dims})",
                        f"acc = acc + {y}.float().sum()",
                    ],
                    lambda: [f"torch.add({s}[:2], 1, out={x})", f"{x}.resize_({dims})"],
                ]
            if h.shape is not None and len(h.shape) == 2:
                opts += [
                    lambda: [f"{x}.t().contiguous().fill_({c})"],
                    lambda: [f"{x}.t().reshape(-1).fill_({c})"],
                    lambda: [f"{x}.diagonal().fill_({c})"],
                    lambda: [f"{x}[..., 0] = {c}"],
                    lambda: [f"{x}[:, 0] = {c}", f"{x}[1:] = {c}"],
                    lambda: [f"{x}[:, :k] = {c}", f"{x}[..., k:] = {c}"],
                ]
        return self.ch.choice(opts)()

    def tricky_alloc(self) -> list[str]:
        """Allocations whose buffer identity is the trap: re-allocated in a loop, stored in a dict."""
        self.tags.add("tricky")
        c = self.ch.choice(["1.5", "2.0"])
        pv = self.fresh("pv")
        if self.ch.chance(30):
            return self.gather_list()
        if self.ch.chance(50):
            self.tags.add("loop-alloc")
            return [
                f"{pv} = None",
                "for i in range(n + 1):",
                f"    if {pv} is not None:",
                f"        acc = acc + {pv}.float().sum()",
                f"    {pv} = {self.alloc((COLS,), 'float32')}",
                "    if i == 0:",
                f"        {pv}.fill_({c})",
                f"acc = acc + {pv}.float().sum()",
            ]
        return [
            f"{pv} = {{'a': {self.alloc((COLS,), 'float32')}, 'b': {self.alloc((COLS,), 'float32')}}}",
            "key = 'a' if flag else 'b'",
            f"{pv}[key].fill_({c})",
            f"acc = acc + {pv}['a'].float().sum()",
        ]

    def gather_list(self) -> list[str]:
        """A list of fresh buffers a collective fills (world size 1: the oracle runs a Gloo
        group), and near misses: an async collective, a list of the wrong length whose error is
        caught, uses of the list before the collective, an alias, a read of an element as the
        collective's input, a collective on one branch only."""
        self.tags.add("gather-list")
        gl, other, p = self.fresh("gl"), self.fresh("other"), self.fresh("p")
        dist = "torch.distributed"
        length = self.ch.choice(["1", "1", "n"])
        lines = [f"{gl} = [{self.alloc((COLS,), 'float32')} for _ in range({length})]"]
        pre: list[list[str]] = [[], [], [f"{other} = {gl}"], [f"acc = acc + len({gl})"]]
        pre += [[f"{gl}.reverse()"], [f"{gl}.insert(0, {gl}.pop().clone())"]]
        if length == "1":
            pre += [
                [f"acc = acc + {gl}[0].float().sum()"],
                [f"{p} = {gl}.pop()", f"{gl}.append({p}.clone())"],
            ]
        else:
            pre = pre[:-1]  # pop from an empty list raises
        late = f"{other} = (t.float().sum() for t in {gl})"  # made before, stepped after
        pre.append([late])
        before = self.ch.choice(pre)
        src = self.ch.choice(["inp[1]", "inp[0] * 2", f"{gl}[0]"] if length == "1" else ["inp[1]"])
        call = self.ch.choice(
            [
                [f"{dist}.all_gather({gl}, {src})"],
                [f"{dist}.all_gather(tensor_list={gl}, tensor={src})"],
                [f"{dist}.all_to_all({gl}, [{src}])"],
                [f"{p} = {dist}.all_gather({gl}, {src}, async_op=True)", f"{p}.wait()"],
                ["if flag:", f"    {dist}.all_gather({gl}, {src})"],
            ]
        )
        # A list of the wrong length raises: caught, the buffers stay as they were.
        if length != "1":
            call = ["try:", *("    " + c for c in call), "except RuntimeError:", "    pass"]
        reads = [
            [f"for t in {gl}:", "    acc = acc + t.float().sum()"],
            [f"acc = acc + torch.cat([inp[1], *{gl}]).float().sum()"],
            [f"acc = acc + sum(t.float().sum() for t in {gl})"],
        ]
        if length == "1":
            reads += [
                [f"acc = acc + torch.cat({gl}).float().sum()"],
                [f"acc = acc + {gl}[0][:k].float().sum()"],
            ]
        if before == [f"{other} = {gl}"]:
            reads.append([f"for t in {other}:", "    acc = acc + t.float().sum()"])
        if before == [late]:
            reads = [[f"acc = acc + sum({other}, acc * 0)"]]
        return [*lines, *before, *call, *self.ch.choice(reads)]
        return [*lines, *call, *reads]
