"""Annotations for torch: which callables become operator-graph nodes (AsOpNode).

Torch has thousands of operators, so instead of one entry each this module decides
by where a callable comes from (``torch.*``, ``torch.nn.functional.*``, Tensor methods)
and, after the call, by what it returned:

* a result holding tensors      -> an fx node (``call_function`` / ``call_method``)
* a tensor-metadata query       -> a static value (tensor metadata is guarded)
* any other read of tensor data -> dynamic (ValueRead of a Tensor, Figure 12 step 5)
"""
from __future__ import annotations

import functools
import operator
import os
import sys
import types
from typing import Any

import torch

from ..objmodel import is_instance, is_numpy_number
from ..realtype import callable_attr
from . import REGISTRY, Annotation

#: Tensor methods / torch functions whose non-tensor results depend only on metadata.
META_METHODS = frozenset({
    "size", "dim", "ndimension", "numel", "nelement", "stride", "is_contiguous", "is_floating_point",
    "is_complex", "element_size", "get_device", "__len__", "is_tensor", "is_storage", "is_nonzero_meta",
    "is_signed", "type", "storage_offset", "is_set_to", "has_names", "is_inference", "is_pinned",
    "is_shared", "is_leaf", "__hash__", "get_default_dtype", "is_grad_enabled", "is_inference_mode_enabled",
    "is_autocast_enabled", "is_scripting", "is_tracing", "_get_tracing_state", "is_available",
    "is_autocast_cpu_enabled", "has_torch_function", "has_torch_function_unary",
    "has_torch_function_variadic", "get_autocast_gpu_dtype", "result_type",
    "promote_types", "can_cast", "is_same_size", "get_num_threads", "_has_compatible_shallow_copy_type",
    "_is_functional_tensor", "is_vulkan_available", "device_count", "current_device",
})

#: Calls whose output shape depends on tensor values: static-shape graphs cannot hold them.
#: Operators whose output shape depends on tensor values: they stay in the graph, and their
#: outputs' shapes may not be read into Python (see ``OpRecorder.value_shaped``).
VALUE_SHAPED = frozenset({"nonzero", "unique", "unique_consecutive", "masked_select", "argwhere", "bincount",
                          # a sparse tensor stores as many values as are nonzero (indices(), values(), _nnz())
                          "to_sparse", "to_sparse_coo", "to_sparse_csr", "to_sparse_csc", "to_sparse_bsr",
                          "to_sparse_bsc", "_to_sparse", "sparse_mask"})

#: Operator names (substrings) that draw random numbers (or set the RNG states): their results are
#: no record constants, and a graph holding one may change the RNG states (magpy.codegen).
RANDOM_OPS = ("rand", "bernoulli", "dropout", "normal", "multinomial", "poisson", "uniform", "exponential",
              "geometric", "cauchy", "rng_state")

DATA_DEPENDENT = frozenset({
    "item", "tolist", "numpy", "__bool__", "__int__", "__float__", "__index__", "__complex__",
    "data_ptr", "equal", "allclose", "is_nonzero", "__contains__", "__array__", "__repr__", "__str__",
    "__format__", "backward", "register_hook", "retain_grad", "_local_scalar_dense", "untyped_storage",
    "storage", "__reduce_ex__", "__deepcopy__", "__setstate__", "manual_seed", "seed", "initial_seed",
    "synchronize", "set_rng_state", "get_rng_state", "cpu_nonzero",
})

#: Tensor methods that read a value into Python: fine for a small value-guarded tensor.
SCALAR_READS = frozenset({"item", "tolist", "__bool__", "__float__", "__int__", "__index__"})
#: Tensor methods that read its shape, by what magpy.monitor.scalars calls the read.
SIZE_READS = {"size": "size", "numel": "numel", "nelement": "numel", "__len__": "len"}


def shape_depends_on_values(name: str, args, kwargs) -> bool:
    """Does this call's output *shape* depend on tensor values (not only on input shapes)?

    The graph still computes the right tensor, but the monitor run saw one shape and the
    program may read it (``y.shape[0]``, a view, a loop bound): a record would reuse it for
    inputs whose values give another shape. Such outputs are marked (``value_shaped``) and
    reading their shape is dynamic.
    """
    if name in VALUE_SHAPED or (name == "getitem" and len(args) > 1 and has_bool_tensor(args[1])):
        return True
    if name in ("_pack_padded_sequence", "_pad_packed_sequence"):
        return True   # the sizes come from the values of `lengths` / `batch_sizes`
    if name == "repeat_interleave":
        repeats = kwargs.get("repeats", args[1] if len(args) > 1 else (args[0] if len(args) == 1 else None))
        return isinstance(repeats, torch.Tensor)
    if name == "where":
        return len(args) == 1 and not kwargs   # torch.where(cond) is nonzero(cond, as_tuple=True)
    if name == "tensor_split":
        return len(args) > 1 and isinstance(args[1], torch.Tensor) or isinstance(
            kwargs.get("indices_or_sections", kwargs.get("indices")), torch.Tensor)
    if name == "one_hot":   # num_classes=-1 (the default): max label + 1
        n = kwargs.get("num_classes", args[1] if len(args) > 1 else -1)
        return isinstance(n, torch.Tensor) or n < 0
    return tensor_as_int_arg(name, args, kwargs)


def _number_tensor(v: Any) -> bool:
    """A one-element tensor that an ``int`` parameter takes through ``__index__``."""
    return isinstance(v, torch.Tensor) and not v.is_floating_point() and not v.is_complex() and v.numel() == 1


#: Operators whose ``Scalar`` parameters are sizes (the length of ``arange(n)``).
SCALAR_SIZED = frozenset({"arange", "range"})
_SCHEMA_CACHE: dict[str, list] = {}


def _schemas(name: str) -> list:
    if name not in _SCHEMA_CACHE:
        try:
            _SCHEMA_CACHE[name] = list(torch._C._jit_get_schemas_for_operator("aten::" + name))
        except Exception:   # pragma: no cover - not an aten name
            _SCHEMA_CACHE[name] = []
    return _SCHEMA_CACHE[name]


def _is_int_type(t: str) -> bool:
    return "int" in t and "Tensor" not in t and "number" not in t


def tensor_as_int_arg(name: str, args, kwargs) -> bool:
    """Is a one-element integer tensor passed where the operator takes an ``int`` (a size, a count,
    a dimension: ``torch.zeros(n)``, ``x.expand(n, 2)``, ``topk(k)``, ``torch.full((n,), v)``)? The
    operator reads its value, so the output's shape may depend on it. Decided by the aten schemas of
    ``name``: every overload types that parameter ``int``/``int[]`` (a ``Tensor`` or ``Scalar``
    parameter takes it as a tensor)."""
    if name in SCALAR_SIZED and any(isinstance(v, torch.Tensor) and v.numel() == 1
                                    for v in (*args, *kwargs.values())):
        return True
    found = [(i, v) for i, v in enumerate(args) if _number_tensor(v)
             or (isinstance(v, (list, tuple)) and any(_number_tensor(x) for x in v))]
    found += [(k, v) for k, v in kwargs.items() if _number_tensor(v)
              or (isinstance(v, (list, tuple)) and any(_number_tensor(x) for x in v))]
    if not found:
        return False
    schemas = _schemas(name) or _schemas(name.rstrip("_"))
    for where, _ in found:
        types = []
        for s in schemas:
            if isinstance(where, str):
                types += [str(a.type) for a in s.arguments if a.name == where]
                continue
            pos = [a for a in s.arguments if not a.kwarg_only]
            if where < len(pos):
                types.append(str(pos[where].type))
            elif any(str(a.type) == "List[int]" for a in pos):   # sizes given as varargs: zeros(n, 2)
                types.append("List[int]")
        if types and all(_is_int_type(t) for t in types):
            return True
    return False


#: Tensor attributes (LOAD_ATTR) that are static metadata.
META_ATTRS = frozenset({
    "shape", "dtype", "device", "ndim", "is_cuda", "requires_grad", "layout", "is_sparse", "is_quantized",
    "is_meta", "is_mkldnn", "is_nested", "is_cpu", "is_xla", "is_mps", "names", "itemsize", "nbytes",
    "is_leaf",
})
#: Tensor attributes that are themselves tensor operations.
OP_ATTRS = frozenset({"T", "mT", "H", "mH", "real", "imag", "data"})

_TORCH_MODULE_PREFIXES = ("torch",)
_TENSOR_TYPES = (torch.Tensor,)
_TensorBase = getattr(torch._C, "TensorBase", getattr(torch._C, "_TensorBase", None))

OP_FUNCTION = "function"
OP_METHOD = "method"

# Graph-level side effects that stay in the graph (grad mode switches inside the program).
GRAD_MODE_OPS = {torch._C._set_grad_enabled}


def _module_of(fn) -> str:
    mod = getattr(fn, "__module__", None)
    if mod is None:
        self_ = getattr(fn, "__self__", None)
        if is_instance(self_, types.ModuleType):
            mod = self_.__name__
    return mod or ""


def tensor_method_name(fn, args: list) -> str | None:
    """If calling ``fn(*args)`` is a Tensor method call, its name."""
    self_ = callable_attr(fn, "__self__")
    if is_instance(self_, _TENSOR_TYPES) and not is_instance(fn, type):
        return getattr(fn, "__name__", None)
    if args and is_instance(args[0], _TENSOR_TYPES):
        objclass = callable_attr(fn, "__objclass__")
        if objclass is not None and (objclass is _TensorBase or objclass is torch.Tensor):
            return fn.__name__
        if is_instance(fn, types.FunctionType) and fn.__qualname__.startswith(("Tensor.", "_TensorBase.")) \
                and _module_of(fn).startswith("torch"):
            return fn.__name__
    return None


_TORCH_DIR = os.path.dirname(torch.__file__)


def is_torch_function(fn) -> bool:
    """A free function of a torch namespace (torch.*, torch.nn.functional.*, torch.linalg...)."""
    if isinstance(fn, type) or isinstance(fn, torch.nn.Module):
        return False
    if fn in GRAD_MODE_OPS:
        return True
    mod = _module_of(fn)
    if not mod.startswith(_TORCH_MODULE_PREFIXES):
        return False
    code = getattr(fn, "__code__", None)
    if isinstance(code, types.CodeType) and not code.co_filename.startswith(_TORCH_DIR):
        # a Python function written elsewhere that only names a torch module (`@functools.wraps(F.gelu)`
        # copies `__module__` and `__qualname__`): user code, monitored
        return False
    # Module-machinery Python code is user-level code for us, not an operator.
    if mod.startswith(("torch.nn.modules", "torch.nn.utils", "torch.autograd.grad_mode", "torch.utils",
                       "torch.autograd.function",
                       "torch._dynamo", "torch.fx", "torch.jit._script", "torch._jit_internal",
                       "torch.ao.nn", "torch.nn.quantized", "torch.nn.qat", "torch.nn.intrinsic",
                       "torch.ao.quantization", "torch.nn.init", "torch.nn.parameter", "torch.testing")):
        return False
    if isinstance(fn, types.FunctionType) and mod == "torch.distributions.kl":
        # kl_divergence(p, q): Python code over distribution objects (it looks up the pair's
        # function), monitored; its operators become graph nodes.
        return False
    if isinstance(fn, types.FunctionType) and _is_object_method(fn):
        # A method of a torch class that is not a tensor (FloatFunctional.cat, Normal.sample,
        # Categorical.log_prob): Python code to monitor, whose operators become graph nodes.
        return False
    if isinstance(fn, types.FunctionType) and fn.__name__.startswith("<"):
        # A comprehension, lambda or generator expression of torch's own Python code (followed
        # when that code is: a function handed the program's code): not an operator.
        return False
    if isinstance(fn, types.FunctionType) and fn.__name__.startswith("_") and not fn.__name__.startswith("__") \
            and fn not in GRAD_MODE_OPS:
        # A private Python helper (F._mha_shape_check, init._calculate_correct_fan): shape checks
        # and bookkeeping around operators, not an operator of its own. Monitored like user code.
        return False
    return isinstance(fn, (types.BuiltinFunctionType, types.FunctionType, types.BuiltinMethodType)) \
        or type(fn).__name__ in ("builtin_function_or_method", "method_descriptor", "OpOverloadPacket",
                                 "_ParameterizedCall", "function")


def _python_code(v) -> bool:
    """Is ``v`` Python code of the program (a function, a bound method, a partial of one)?"""
    if isinstance(v, functools.partial):
        v = v.func
    if isinstance(v, types.MethodType):
        v = v.__func__
    return isinstance(v, types.FunctionType) and not is_torch_function(v)


def python_taking_code(fn, args: tuple, kwargs: dict) -> bool:
    """Is ``fn`` a torch function written in Python that is handed the program's code (directly or
    in a list, tuple or dict: a higher-order operator's ``combine_fn``)? It is followed like any
    Python, not made one operator: the code it calls then runs monitored."""
    if not isinstance(fn, types.FunctionType):
        return False
    for v in (*args, *kwargs.values()):
        if _python_code(v) or (type(v) in (list, tuple, dict) and any(
                _python_code(e) for e in (v.values() if type(v) is dict else v))):
            return True
    return False


def _is_object_method(fn: types.FunctionType) -> bool:
    """Is ``fn`` defined in the body of a class that is not a tensor class (found by its
    qualified name)? Tensor methods (``Tensor.split`` in Python) are operators."""
    owner_name, _, _ = fn.__qualname__.rpartition(".")
    if not owner_name or "<locals>" in owner_name:
        return False
    owner = sys.modules.get(fn.__module__)
    for part in owner_name.split("."):
        owner = getattr(owner, part, None)
    return isinstance(owner, type) and not issubclass(owner, torch.Tensor)


def contains_instance(value, types: tuple, _depth: int = 0) -> bool:
    """Is there an instance of ``types`` in ``value``, or in the lists, tuples and dict values it
    holds (four levels deep)? (Asked of the real type: no lookup hook of the program's runs.)"""
    if is_instance(value, types):
        return True
    if _depth < 4 and is_instance(value, (list, tuple)):
        return any(contains_instance(v, types, _depth + 1) for v in value)
    if _depth < 4 and is_instance(value, dict):
        return any(contains_instance(v, types, _depth + 1) for v in value.values())
    return False


def contains_tensor(value) -> bool:
    return contains_instance(value, _TENSOR_TYPES)


#: Operators whose kernels update running statistics in their arguments through raw pointers,
#: without moving the tensors' version counters (``instance_norm`` copies back with a
#: counted ``copy_``): callable -> (the written parameters, the flag
#: that turns the update on, None: always), each as (position, keyword name).
_STATS_AT_1 = ((1, "running_mean"), (2, "running_var"))   # F.batch_norm(input, running_mean, running_var, ...)
_STATS_AT_3 = ((3, "running_mean"), (4, "running_var"))   # torch.batch_norm(input, weight, bias, running_mean, ...)
SILENT_WRITES = {
    fn: spec for fn, spec in (
        (getattr(torch.nn.functional, "batch_norm", None), (_STATS_AT_1, (5, "training"))),
        (getattr(torch, "batch_norm_update_stats", None), (_STATS_AT_1, None)),
        *((getattr(torch, name, None), (_STATS_AT_3, (5, "training"))) for name in (
            "batch_norm", "native_batch_norm", "_native_batch_norm_legit", "_batch_norm_impl_index",
            "cudnn_batch_norm", "miopen_batch_norm", "_batch_norm_with_update")),
    ) if fn is not None
}


def silently_written(target, args, kwargs) -> list:
    """The tensors a call of :data:`SILENT_WRITES` changes in place (``F.batch_norm`` in training
    mode writes ``running_mean``/``running_var``) that the version counters do not show."""
    try:
        spec = SILENT_WRITES.get(target)
    except TypeError:   # (an unhashable callable)
        return []
    if spec is None:
        return []
    params, flag = spec

    def arg(pos, key):
        return args[pos] if pos < len(args) else kwargs.get(key)

    if flag is not None and not arg(*flag):
        return []
    return [t for t in (arg(*p) for p in params) if isinstance(t, torch.Tensor)]


def tensors_in(args, kwargs) -> list:
    """The tensors among call inputs (one level into lists, tuples and dicts)."""
    out = []
    for v in (*args, *kwargs.values()):
        if isinstance(v, torch.Tensor):
            out.append(v)
        elif isinstance(v, (list, tuple)):
            out.extend(e for e in v if isinstance(e, torch.Tensor))
        elif isinstance(v, dict):
            out.extend(e for e in v.values() if isinstance(e, torch.Tensor))
    return out


def tensor_in_index(key) -> bool:
    """A tensor as a Python sequence's index or slice bound (``xs[t]``, ``words[:n]``): read
    through ``__index__``, so which items it names depends on the tensor's value."""
    if type(key) is slice:
        return any(isinstance(b, torch.Tensor) for b in (key.start, key.stop, key.step))
    return isinstance(key, torch.Tensor)


def has_bool_tensor(key) -> bool:
    """A boolean-mask index (a bool tensor, or one inside a tuple index): a data-dependent shape."""
    if isinstance(key, torch.Tensor):
        return key.dtype == torch.bool
    if isinstance(key, tuple):
        return any(isinstance(k, torch.Tensor) and k.dtype == torch.bool for k in key)
    return False


# Binary/unary opcodes on tensors map to these operator functions.
BINARY_OPS = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv, "//": operator.floordiv,
    "%": operator.mod, "**": operator.pow, "@": operator.matmul, "&": operator.and_, "|": operator.or_,
    "^": operator.xor, "<<": operator.lshift, ">>": operator.rshift,
    "+=": operator.iadd, "-=": operator.isub, "*=": operator.imul, "/=": operator.itruediv,
    "//=": operator.ifloordiv, "%=": operator.imod, "**=": operator.ipow, "@=": operator.imatmul,
    "&=": operator.iand, "|=": operator.ior, "^=": operator.ixor, "<<=": operator.ilshift, ">>=": operator.irshift,
}
COMPARE_OPS = {"<": operator.lt, "<=": operator.le, "==": operator.eq, "!=": operator.ne, ">": operator.gt,
               ">=": operator.ge}
UNARY_OPS = {"UNARY_NEGATIVE": operator.neg, "UNARY_POSITIVE": operator.pos, "UNARY_INVERT": operator.invert}

# A few torch callables that are pure but not operators.
for _fn in (torch.Size, torch.device, torch.finfo, torch.iinfo, torch.get_default_dtype, torch.is_tensor,
            torch.is_grad_enabled, torch.is_floating_point, torch.is_complex, torch.numel, torch.result_type,
            torch.promote_types, torch.can_cast, torch.jit.is_scripting, torch.jit.is_tracing,
            torch._C._get_tracing_state, torch.is_autocast_enabled, torch.cuda.is_available):
    REGISTRY.add(_fn, Annotation(meta=True, note="torch metadata"))
# "Is a compiler tracing me?": False in a monitor run, as in eager: MagPy runs the real program,
# so it follows the path eager takes (see magpy.api, "Compiler checks").
import torch.compiler as _tc  # noqa: E402

for _fn in (_tc.is_compiling, getattr(torch._utils, "is_compiling", None)):
    if _fn is not None:
        REGISTRY.add(_fn, Annotation(meta=True, note="compiling flag"))
for _name in ("_has_torch_function", "_has_torch_function_unary", "_has_torch_function_variadic",
              "_get_tracing_state", "_is_torch_function_enabled", "_get_cudnn_enabled"):
    _fn = getattr(torch._C, _name, None)
    if _fn is not None:
        REGISTRY.add(_fn, Annotation(meta=True, value_read=(), note="torch dispatch query"))
for _fn in (torch.overrides.has_torch_function, torch.overrides.has_torch_function_unary,
            torch.overrides.has_torch_function_variadic):
    REGISTRY.add(_fn, Annotation(meta=True, value_read=(), note="torch dispatch query"))
for _name in dir(torch.Size):
    _obj = getattr(torch.Size, _name)
    if callable(_obj) and not _name.startswith("__"):
        REGISTRY.add(_obj, Annotation(meta=True, note="torch.Size method"))
REGISTRY.add(torch.manual_seed, Annotation(pure_closure=False))


# -- legacy constructors (``torch.FloatTensor([t0, 2.0])``, magpy.monitor.natives) ----------------------------

def legacy_tensor(data: Any, dtype: torch.dtype, shape: tuple) -> torch.Tensor:
    """``torch.FloatTensor([t0, t1, 2.0])`` as a graph node: the constructor reads each tensor in
    the data as a Python number (one element), i.e. its value converted to ``dtype`` on the CPU."""
    flat, todo = [], [data]
    while todo:
        e = todo.pop()
        if isinstance(e, (list, tuple)):
            todo.extend(reversed(e))
        else:
            flat.append(e.detach().reshape(()).to("cpu", dtype) if isinstance(e, torch.Tensor)
                        else torch.tensor(e, dtype=dtype))
    return torch.stack(flat).reshape(shape)


def legacy_reads(tensors: list, dtype: torch.dtype) -> bool:
    """Can :func:`legacy_tensor` read these tensors as the constructor does (one element each,
    no complex values, integers or booleans into an integer type)?"""
    return all(t.numel() == 1 and not t.is_complex() and (dtype.is_floating_point or dtype == torch.bool
               or not t.is_floating_point()) for t in tensors)


def numbers_or_tensors(data, depth: int = 0) -> bool:
    """Legacy-constructor data of numbers (numpy's too) and tensors, in lists and tuples."""
    return depth <= 8 and all(type(e) in (int, float, bool) or is_numpy_number(e) or isinstance(e, torch.Tensor)
                              or (isinstance(e, (list, tuple)) and numbers_or_tensors(e, depth + 1)) for e in data)
