"""Generated lifecycle programs whose backend is driven through a wrapper forwarding its hooks.

The backend of generator.py's lifecycle programs (buffers allocated in `__init__` or in
`init_cuda_graph_state`, random setups and forward) is held, twice, by a multi-step wrapper that
forwards each hook of the model from its own hook of that name (analysis/lifecycle_delegation.py).
Each hook of the wrapper is drawn: forwarded in a loop over its children (the sound shape), or
not forwarded, forwarded only under a condition, to the first child only, twice, or as another
hook (a phase the child's order does not allow). The engine, in another module of the package,
drives the wrapper in the model's order and runs every child's forward after each setup: the
children see the wrapper's order, which is the model's only where every hook is forwarded.
"""

from __future__ import annotations

from tests.soundness.generator import (
    LIFECYCLE_SETUPS,
    PRELUDE,
    Chooser,
    RandomChooser,
    build_program,
)
from tests.soundness.multimodule import MultiProgram

HOOKS = ("init_cuda_graph_state", *LIFECYCLE_SETUPS)

# The engine: graph init, then each setup followed by every child's forward, as SGLang's draft
# runners drive a multi-step backend (the wrapper itself has no forward).
DRIVE = """

def drive(wrapper_cls, inp, n, k, flag):
    w = wrapper_cls(inp, n, k, flag)
    w.init_cuda_graph_state(inp, n, k, flag)
    outs = []
    for name in ("init_forward_metadata_capture_cuda_graph", "init_forward_metadata_replay_cuda_graph", "init_forward_metadata"):
        getattr(w, name)(inp, n, k, flag)
        outs.append([b.forward_decode(inp, n, k, flag) for b in w.attn_backends])
    return outs, [b.trace for b in w.attn_backends]
"""

# How one hook of the wrapper reaches the children; only "loop" keeps them in the model's order.
FORMS = ("loop", "loop", "loop", "loop", "each", "skip", "cond", "first", "twice", "other")


def _forward(form: str, hook: str, ch: Chooser) -> list[str]:
    call = f".{hook}(inp, n, k, flag)"
    if form == "loop":
        return ["for i in range(self.steps):", f"    self.attn_backends[i]{call}"]
    if form == "each":
        return ["for b in self.attn_backends:", f"    b{call}"]
    if form == "skip":
        return ["pass"]
    if form == "cond":
        return [
            "if flag:",
            "    for i in range(self.steps):",
            f"        self.attn_backends[i]{call}",
        ]
    if form == "first":
        return [f"self.attn_backends[0]{call}"]
    if form == "twice":
        return ["for i in range(self.steps):", f"    self.attn_backends[i]{call}"] * 2
    other = ch.choice([h for h in HOOKS if h != hook])
    return ["for i in range(self.steps):", f"    self.attn_backends[i].{other}(inp, n, k, flag)"]


def wrapper_source(ch: Chooser) -> tuple[str, set[str]]:
    """The wrapper class and its entry `f`; the tags name each hook's form."""
    lines = [
        "class MultiStep:",
        "    def __init__(self, inp, n, k, flag):",
        "        self.steps = 2",
        "        self.attn_backends = []",
        "        for _ in range(self.steps):",
        "            self.attn_backends.append(Backend(inp, n, k, flag))",
    ]
    tags = set()
    uniform = ch.chance(50)  # every hook the sound shape: the case that may be proven
    for hook in HOOKS:
        form = "loop" if uniform else ch.choice(list(FORMS))
        tags.add(f"delegation-{form}")
        lines += ["", f"    def {hook}(self, inp, n, k, flag):"]
        lines += ["        " + x for x in _forward(form, hook, ch)]
    lines += ["", "", "def f(inp, n, k, flag):", "    return drive(MultiStep, inp, n, k, flag)"]
    return "\n".join(lines) + "\n", tags


def random_delegation_program(seed: int) -> MultiProgram:
    """A package: `lib.py` has the imports, the prelude and the engine's `drive`; `main.py` the
    backend, the wrapper and `f`. The backend's `__init__` takes the program's inputs."""
    ch = RandomChooser(seed)
    program = build_program(ch, delegation=True)
    head, _, rest = program.source.partition("\n\n")
    assert PRELUDE in rest
    rest = rest.replace(PRELUDE, "", 1)
    if "alloc-in-init" not in program.tags:
        init = "    def __init__(self, inp, n, k, flag):\n        self.trace = []\n"
        rest = rest.replace("class Backend:", "class Backend:\n" + init, 1)
    wrapper, tags = wrapper_source(ch)
    modules, members = {"torch"}, {}
    if "import torch as th" in head.splitlines():
        modules.add("th")
    if "from torch import zeros" in head.splitlines():
        members["zeros"] = "zeros"
    lib = head + "\n\n" + PRELUDE + DRIVE
    main = "from .lib import *\n" + rest.rstrip() + "\n\n\n" + wrapper
    files = {"__init__.py": "", "lib.py": lib, "main.py": main}
    return MultiProgram(
        f"zo_dg_{seed}", files, main, (modules, members), frozenset({*program.tags, *tags})
    )
