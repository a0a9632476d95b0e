"""Which sites may have made the object a name or `self` place holds (object_origins), and which
classes keep their instances' attributes plainly (plain_classes): the facts that let a slot
exposed on one object not be read through a place holding another (docs/holders.md)."""

from __future__ import annotations

import ast
import textwrap

from zeroopt.analysis.lifecycle_objects import object_origins, plain_classes
from zeroopt.analysis.lifecycle_program import Program


def _program(code: str, params: set[str] | None = None) -> Program:
    return Program(body=ast.parse(textwrap.dedent(code)).body, params=params or set())


BODY = """
meta = Meta()
expand = Meta()
same = meta
self.meta = meta
self.expand: Meta = None
self.expand = expand
self.table = {}
self.pick = same
local = self.expand
"""


def test_names_and_places_get_the_sites_that_made_their_objects() -> None:
    found = object_origins(_program(BODY), {"Meta"}, attributes=True)
    assert found["meta"] == {"meta"} and found["expand"] == {"expand"}
    assert found["same"] == {"meta"} and found["self.pick"] == {"meta"}
    assert found["self.expand"] == {"expand"} and found["local"] == {"expand"}
    assert found["self.table"] == {"self.table"}


def test_self_places_only_on_witness_programs() -> None:
    found = object_origins(_program(BODY), {"Meta"}, attributes=False)
    assert "self.expand" not in found and "local" not in found
    assert found["same"] == {"meta"}


def test_any_other_binding_leaves_the_place_unknown() -> None:
    code = BODY + "\nsame = make()\nother.expand = meta\nfor meta in xs:\n    pass\n"
    found = object_origins(_program(code), {"Meta"}, attributes=True)
    # `meta` is a loop variable too, `same` a call's result, `.expand` stored through `other`.
    assert "meta" not in found and "same" not in found and "self.pick" not in found
    assert "self.expand" not in found and "local" not in found
    assert found["expand"] == {"expand"}


def test_parameters_and_unplain_classes_are_unknown() -> None:
    found = object_origins(_program(BODY, params={"expand"}), {"Meta"}, attributes=True)
    assert "expand" not in found and "self.expand" not in found
    found = object_origins(_program(BODY), set(), attributes=True)
    assert "meta" not in found and found["self.table"] == {"self.table"}


def test_setattr_or_a_rebound_self_spoils_the_places() -> None:
    for extra in ("setattr(self, name, meta)", "self = other", "x = vars(self)"):
        found = object_origins(_program(BODY + extra), {"Meta"}, attributes=True)
        assert not any(k.startswith("self.") for k in found), extra


def test_plain_classes() -> None:
    tree = ast.parse(
        textwrap.dedent(
            """
            @dataclass
            class Plain:
                lens: torch.Tensor = None
                window: tuple = (-1, -1)
                extra: list = field(default_factory=list)

                @dataclass
                class Local:
                    n: int = 0

                def helper(self):
                    return 1


            class Prop:
                @property
                def lens(self):
                    return OTHER.lens


            class Hook:
                def __getattr__(self, name):
                    return 0


            class Desc:
                lens = Descriptor()


            class Meta:
                class lens(metaclass=M):
                    pass


            class Default:
                lens: object = field(default=Descriptor())
            """
        )
    )
    names = {"Plain", "Prop", "Hook", "Desc", "Meta", "Default"}
    assert plain_classes(tree, names) == {"Plain"}
