"""Imports inside the compiled function: `from mod import NAME` of a function later replaced,
`import mod` then `mod.attr` with the module swapped in `sys.modules`, `import pkg.sub` and
`import pkg.sub as s` attribute chains, relative imports inside a package, and a module whose
first import (which runs its code) happens inside the call. Also numpy scalars read from outside
(a config value) inside a numpy computation: numpy's promotion reads their type.

Each world makes its own modules and puts them into `sys.modules` under the fixed name before
each of its calls (the eager and the compiled world take turns), so what the import statement
finds is that world's module."""
from harness import program

F_ = "imports"

program(F_, "from_import_of_a_function_later_replaced", """
acts = new_module("sound_imports_acts", '''
def act(x):
    return x * 2.0
''')
def f(x):
    from sound_imports_acts import act
    return act(x) + 1.0
def make(): return f
def inputs(i): return (torch.randn(3),)
def step(i):
    sys.modules["sound_imports_acts"] = acts
    if i == 2: acts.act = lambda x: x - 3.0
CLEANUP.append(lambda: sys.modules.pop("sound_imports_acts", None))
NCALLS = 5
""")

program(F_, "import_mod_then_attr_with_the_module_swapped", """
first = new_module("sound_imports_cfg_first", "SCALE = 2.0")
second = new_module("sound_imports_cfg_second", "SCALE = 7.0")
def f(x):
    import sound_imports_cfg
    return x * sound_imports_cfg.SCALE
def make(): return f
def inputs(i): return (torch.randn(3),)
def step(i):
    sys.modules["sound_imports_cfg"] = first if i < 2 else second   # a reload that made a new module
CLEANUP.append(lambda: sys.modules.pop("sound_imports_cfg", None))
NCALLS = 5
""")

program(F_, "from_import_of_a_value_with_the_module_swapped", """
first = new_module("sound_imports_val_first", "SHIFT = 1.0")
second = new_module("sound_imports_val_second", "SHIFT = -4.0")
def f(x):
    from sound_imports_val import SHIFT
    return x + SHIFT
def make(): return f
def inputs(i): return (torch.randn(3),)
def step(i):
    sys.modules["sound_imports_val"] = first if i < 2 else second
CLEANUP.append(lambda: sys.modules.pop("sound_imports_val", None))
NCALLS = 5
""")

program(F_, "import_pkg_sub_attribute_chain", """
def make_pkg(gain):
    pkg = new_module("sound_imports_pkg", "")
    pkg.__path__ = []
    sub = new_module("sound_imports_pkg_sub", f"GAIN = {gain}")
    pkg.sub = sub
    return pkg, sub
pkg_a, sub_a = make_pkg(2.0)
pkg_b, sub_b = make_pkg(3.0)
def f(x):
    import sound_imports_pkg.sub
    return x * sound_imports_pkg.sub.GAIN
def make(): return f
def inputs(i): return (torch.randn(3),)
def step(i):
    pkg, sub = (pkg_a, sub_a) if i < 2 else (pkg_b, sub_b)   # the package is imported anew (a new object)
    sys.modules["sound_imports_pkg"] = pkg
    sys.modules["sound_imports_pkg.sub"] = sub
    if i == 4: sub.GAIN = 9.0
def cleanup():
    sys.modules.pop("sound_imports_pkg", None)
    sys.modules.pop("sound_imports_pkg.sub", None)
CLEANUP.append(cleanup)
NCALLS = 6
""")

program(F_, "import_pkg_sub_as_alias_sees_a_replaced_submodule", """
pkg = new_module("sound_imports_apkg", "")
pkg.__path__ = []
sub_a = new_module("sound_imports_apkg_sub_a", "GAIN = 2.0")
sub_b = new_module("sound_imports_apkg_sub_b", "GAIN = 5.0")
pkg.sub = sub_a
def f(x):
    import sound_imports_apkg.sub as s
    return x * s.GAIN
def make(): return f
def inputs(i): return (torch.randn(3),)
def step(i):
    if i == 2: pkg.sub = sub_b
    sys.modules["sound_imports_apkg"] = pkg
    sys.modules["sound_imports_apkg.sub"] = pkg.sub
def cleanup():
    sys.modules.pop("sound_imports_apkg", None)
    sys.modules.pop("sound_imports_apkg.sub", None)
CLEANUP.append(cleanup)
NCALLS = 5
""")

program(F_, "relative_import_inside_a_package", """
pkg = new_module("sound_imports_rpkg", "")
pkg.__path__ = []
cfg_a = new_module("sound_imports_rpkg_cfg_a", "SCALE = 2.0")
cfg_b = new_module("sound_imports_rpkg_cfg_b", "SCALE = 6.0")
pkg.cfg = cfg_a
sub = new_module("sound_imports_rpkg_sub", '''
def f(x):
    from . import cfg
    from .cfg import SCALE
    return x * cfg.SCALE + SCALE
''')
sub.__package__ = "sound_imports_rpkg"
def make(): return sub.f
def inputs(i): return (torch.randn(3),)
def step(i):
    if i == 2: pkg.cfg = cfg_b
    if i == 4: pkg.cfg.SCALE = -1.0
    sys.modules["sound_imports_rpkg"] = pkg
    sys.modules["sound_imports_rpkg.cfg"] = pkg.cfg
def cleanup():
    sys.modules.pop("sound_imports_rpkg", None)
    sys.modules.pop("sound_imports_rpkg.cfg", None)
CLEANUP.append(cleanup)
NCALLS = 6
""")

program(F_, "first_import_inside_the_call_runs_the_module", """
import importlib.abc, importlib.util
LOADS = [0]
class Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    # each world's finder answers only while that world runs (the harness takes turns)
    sound_imports_finder = True
    active = False
    def find_spec(self, name, path, target=None):
        if name == "sound_imports_fresh" and self.active:
            return importlib.util.spec_from_loader(name, self)
        return None
    def create_module(self, spec):
        return None
    def exec_module(self, module):
        LOADS[0] += 1
        module.SCALE = float(LOADS[0])
finder = Finder()
sys.meta_path.insert(0, finder)
def f(x):
    from sound_imports_fresh import SCALE
    return x * SCALE
def make(): return f
def inputs(i): return (torch.randn(3),)
def step(i):
    for other in sys.meta_path:
        if getattr(other, "sound_imports_finder", False): other.active = other is finder
    if i in (0, 3):
        sys.modules.pop("sound_imports_fresh", None)   # the next call imports it anew
    elif CURRENT[0] is not None:
        sys.modules["sound_imports_fresh"] = CURRENT[0]
CURRENT = [None]
def post(out, i):
    CURRENT[0] = sys.modules.get("sound_imports_fresh")
def state(): return LOADS[0]
def cleanup():
    sys.meta_path.remove(finder)
    sys.modules.pop("sound_imports_fresh", None)
CLEANUP.append(cleanup)
NCALLS = 6
""")

program(F_, "numpy_scalar_from_a_config_dict_in_numpy_expressions", """
CFG = {"lo": np.float32(0.5)}
def f(x):
    a = x.numpy()
    b = np.array([a.sum(), CFG["lo"]])     # the list's numpy scalar decides the array's dtype
    c = np.maximum(a, CFG["lo"])           # a float32 array with np.float64 is float64
    return torch.from_numpy(b), torch.from_numpy(c)
def make(): return f
def inputs(i): return (torch.ones(2) * (i % 2),)
def step(i):
    if i == 3: CFG["lo"] = np.float64(0.5)
NCALLS = 6
""")
