"""Written the ways users write such code, changing outside state between calls: numpy arrays from outside with non-numeric dtypes (unicode, structured, object) changed in place between calls."""
from harness import program

F_ = "user_numpyarrays"

program(F_, "unicode_array_of_activation_names_edited", """
EXPECT = "record"
ACTS = np.array(["relu", "tanh", "relu"], dtype="<U16")
def f(x):
    for name in ACTS:
        x = getattr(torch, str(name))(x) + 0.1
    return x
def make(): return f
def inputs(i): return (torch.randn(3),)
def step(i):
    if i == 2: ACTS[0] = "sigmoid"
""")

program(F_, "unicode_array_item_as_dict_key", """
EXPECT = "record"
LABELS = np.array(["cat", "dog"])
WEIGHTS = {"cat": 1.0, "dog": 2.0, "cow": 5.0}
def f(x):
    return x * WEIGHTS[LABELS[1]]
def make(): return f
def inputs(i): return (torch.ones(2),)
def step(i):
    if i == 2: LABELS[1] = "cow"
""")

program(F_, "structured_array_per_layer_scales", """
EXPECT = "record"
TABLE = np.zeros(2, dtype=[("scale", "f4"), ("bias", "f4")])
TABLE["scale"] = [1.0, 2.0]
def f(x):
    s = torch.from_numpy(TABLE["scale"].copy())
    b = torch.from_numpy(TABLE["bias"].copy())
    return x * s + b
def make(): return f
def inputs(i): return (torch.ones(2),)
def step(i):
    if i == 2: TABLE["scale"][0] = 5.0
    if i == 3: TABLE[1] = (0.5, 1.0)
""")

program(F_, "object_array_of_python_floats", """
EXPECT = "record"
COEF = np.array([1.0, 2.0, 3.0], dtype=object)
def f(x):
    return x * float(COEF.sum())
def make(): return f
def inputs(i): return (torch.ones(2),)
def step(i):
    if i == 2: COEF[1] = 10.0
""")

program(F_, "plain_float_array_edited_in_place_control", """
EXPECT = "record"
COEF = np.array([1.0, 2.0, 3.0])
def f(x):
    return x * float(COEF.sum())
def make(): return f
def inputs(i): return (torch.ones(2),)
def step(i):
    if i == 2: COEF[1] = 10.0
""")

program(F_, "bool_mask_array_edited_in_place", """
EXPECT = "record"
KEEP = np.array([True, False, True])
def f(x):
    return x[torch.from_numpy(KEEP.copy())]
def make(): return f
def inputs(i): return (torch.arange(3.0),)
def step(i):
    if i == 2: KEEP[1] = True
""")
