# A store that runs code of the module is not an alias: zeroopt said `safe` for the zeros at line 25.
# `m.lens = buf` calls Meta.__setattr__, which keeps a copy of the still-unwritten buffer, so the
# later `buf.fill_(1)` never reaches what `m.lens` holds. The same for a property setter (line 38) and
# for `__setitem__` (line 46). `python 110.py`
import torch


class Meta:
    def __setattr__(self, name, value):
        object.__setattr__(self, name, value.clone())  # stores a copy


class Prop:
    @property
    def lens(self):
        return self._lens

    @lens.setter
    def lens(self, value):
        self._lens = value.clone()


def through_setattr(n):
    m = Meta()
    buf = torch.zeros(n)
    m.lens = buf
    buf.fill_(1)
    return m.lens.sum()


class Table:
    def __setitem__(self, key, value):
        self.__dict__[key] = value.clone()


def through_property(n):
    p = Prop()
    buf = torch.zeros(n)
    p.lens = buf
    buf.fill_(1)
    return p.lens.sum()


def through_setitem(n):
    t = Table()
    buf = torch.zeros(n)
    t["lens"] = buf
    buf.fill_(1)
    return t.__dict__["lens"].sum()


def run():
    return torch.stack([through_setattr(4), through_property(4), through_setitem(4)])


if __name__ == "__main__":
    real = run()
    _zeros = torch.zeros

    def _poisoned(*a, **k):
        t = _zeros(*a, **k)
        return t.fill_(float("nan") if t.is_floating_point() else 2**30)

    torch.zeros = _poisoned
    poisoned = run()
    torch.zeros = _zeros
    print("torch.zeros:", real, " poisoned (what torch.empty may hold):", poisoned)
