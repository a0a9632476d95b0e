"""Statements of the random generator that use a buffer other than by writing it: reads,
read-modify-writes, metadata that reads no element, and escapes (a container, an attribute, a
helper, a closure, a holder handed on or not).
"""

from __future__ import annotations

from collections.abc import Callable

from tests.soundness.gen_model import GenState, Handle


class Uses(GenState):
    """Reads, read-modify-writes, metadata and escapes of a buffer."""

    def read(self, h: Handle, loop_var: str | None) -> list[str]:
        x = h.name
        self.tags.add("read")
        opts: list[Callable[[], list[str]]] = [
            lambda: [f"acc = acc + {x}.float().sum()"],
            lambda: [f"acc = acc + {x}[:k].float().sum()"],
            lambda: [f"acc = acc + ({x}.float() * 2).cumsum(0).sum()"],
            lambda: [f"if {x}.float().sum() > 0:", "    acc = acc + 1"],
            lambda: [f"acc = acc + {x}.clone().float().sum()"],
            lambda: [
                f"acc = acc + sum(float({x}[j].float().sum()) for j in range(min(2, len({x}))))"
            ],
            lambda: [
                f"acc = acc + torch.stack([{x}[j].float().sum() for j in range(min(n, len({x})))] + [acc * 0]).sum()"
            ],
        ]
        if h.shape is not None:
            opts += [
                lambda: [f"acc = acc + {x}.float().amax()"],
                lambda: [f"acc = acc + {x}[idx].float().sum()"],
                lambda: [f"acc = acc + torch.where({self.mask(h)}, {x}.float(), 0.0).sum()"],
                lambda: [f"acc = acc + {x}[1:].float().sum()"],
            ]
            if loop_var is not None:
                opts.append(lambda: [f"acc = acc + {x}[{loop_var}].float().sum()"])
            if h.dtype in ("int64", "int32"):
                # buffer values used as indices, like page tables: poison may raise
                opts += [
                    lambda: [f"acc = acc + inp.reshape(-1)[{x}.long().clamp(0, 31)].sum()"],
                    lambda: [f"acc = acc + inp.reshape(-1)[{x}.long()].sum()"],
                ]
        return self.ch.choice(opts)()

    def rmw(self, h: Handle) -> list[str]:
        x, c = h.name, self.const(h)
        self.tags.add("read-modify-write")
        if not h.numeric:
            return [self.ch.choice([f"{x} |= True", f"{x}.logical_or_({x})"])]
        opts: list[Callable[[], list[str]]] = [
            lambda: [f"{x} += {c}"],
            lambda: [f"{x}.mul_(2)"],
            lambda: [f"{x}[:k] += 1"],
            lambda: [f"{x}.clamp_(min=0)"],
        ]
        if h.shape is not None:
            s = self.src(h)
            opts += [
                lambda: [f"{x}.add_({s})"],
                lambda: [f"{x}.index_add_(0, idx, {s}[idx])"],
            ]
            if h.dtype in ("float32", "int64"):
                opts.append(lambda: [f"torch.add({x}, 1, out={x})"])
        return self.ch.choice(opts)()

    def metadata(self, h: Handle) -> list[str]:
        x = h.name
        self.tags.add("metadata")
        return [
            self.ch.choice(
                [
                    f"acc = acc + {x}.shape[0]",
                    f"acc = acc + {x}.size(0)",
                    f"acc = acc + len({x})",
                    f"acc = acc + {x}.numel()",
                    f"acc = acc + {x}.dim()",
                    f"acc = acc + (1 if {x}.dtype == torch.float32 else 2)",
                    f"acc = acc + ({x}.device.type == 'cpu')",
                ]
            )
        ]

    def escape(self, h: Handle, hs: list[Handle]) -> list[str]:
        x, c = h.name, self.const(h)
        self.tags.add("escape")
        opts: list[Callable[[], list[str]]] = [
            lambda: [f"store.append({x})"],
            lambda: [f"holder['{x}'] = {x}"],
            lambda: [f"box.{x.replace('.', '_')} = {x}"],
            lambda: [f"acc = acc + helper_read({x})"],
            lambda: [f"helper_write({x})"],
            lambda: [f"helper_partial({x})"],
            lambda: [f"acc = acc + helper_noop({x})"],
            lambda: [f"fill_all({x})"],
        ]
        name = self.fresh("g")
        opts += [
            lambda: [f"def {name}():", f"    return {x}.float().sum()"],
            lambda: [f"def {name}():", f"    {x}.fill_({c})"],
            lambda: [f"{name} = lambda: {x}.float().sum()"],
        ]
        if h.shape is not None:
            k = self.fresh("a")
            opts.append(lambda: [f"{k} = helper_ident({x})", f"{k}.fill_({c})"])
        # Stored in a container or a lambda, then code that is or is not handed the holder.
        held, t = self.fresh("held"), self.fresh("t")
        held_opts: list[Callable[[], list[str]]] = [
            lambda: [f"{held} = [{x}]", f"for {t} in {held}:", f"    {t}.fill_({c})"],
            lambda: [f"{held} = ({x}, 1)", f"fill_all({held}[0])"],
            lambda: [f"{held} = [{x}]", "acc = acc + helper_noop(inp)"],
            lambda: [f"{held} = {{'t': {x}}}", f"helper_write({held}['t'])"],
            lambda: [f"{held} = lambda: {x}.fill_({c})", f"{held}()"],
        ]
        opts += [self._tagged(o, "holder") for o in held_opts]
        lines = self.ch.choice(opts)()
        if lines[0].startswith(f"def {name}") or lines[0].startswith(f"{name} ="):
            self.callables.append((name, "write" if "fill_" in lines[-1] else "read"))
            self.tags.add("closure")
        return lines
