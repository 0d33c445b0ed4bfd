/* The C half of magpy/realtype.py: type tests and class lookups the monitor makes on nearly every
 * event, with the semantics of the Python definitions there (which run where this is not built).
 *
 *   is_instance(v, cls)          issubclass(type(v), cls); isinstance(v, cls) for a tensor
 *   instance_dict(v)             v.__dict__ through the slot its class made, else None
 *   class_lookup(tp, name, d)    the value of `name` in the first class of tp.__mro__ that has it, else d (None)
 *   class_owner(tp, name)        that class, else None
 *   callable_attr(obj, name, d)  getattr(obj, name, d) with nn.Module's __getattr__ done here, and
 *                                only the normal lookup for a class with its own Python hook
 *
 * The Python spellings walk tp.__mro__ and build a mapping proxy per class (`k.__dict__`); here
 * each class's namespace is read directly. No attribute lookup on `v` runs (see realtype.py).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

static PyObject *tensor_type = NULL;   /* torch.Tensor (init) */
static PyObject *module_type = NULL;   /* torch.nn.Module (init) */
static PyObject *module_getattr = NULL;    /* torch.nn.Module.__getattr__ (init) */
static PyObject *module_tables = NULL;     /* the names of a module's tables, in lookup order (init) */
static PyObject *object_getattribute = NULL;   /* object.__getattribute__ */
static PyObject *dict_name = NULL;     /* "__dict__" */
static PyObject *getattribute_name = NULL;    /* "__getattribute__" */
static PyObject *getattr_name = NULL;  /* "__getattr__" */
static PyObject *get_name = NULL;      /* "get" */

/* The namespace of class k (a new reference), or NULL with an error set. */
static PyObject *namespace_of(PyObject *k) {
    if (!PyType_Check(k)) {
        PyErr_SetString(PyExc_TypeError, "an __mro__ entry is not a class");
        return NULL;
    }
#if PY_VERSION_HEX >= 0x030C0000
    return PyType_GetDict((PyTypeObject *)k);   /* (static builtin types keep theirs elsewhere) */
#else
    PyObject *d = ((PyTypeObject *)k)->tp_dict;
    if (d == NULL) {
        PyErr_SetString(PyExc_TypeError, "a class without a namespace");
        return NULL;
    }
    return Py_NewRef(d);
#endif
}

/* The first class of tp.__mro__ whose namespace holds name, with the value there (both borrowed
 * from tp's MRO, kept alive by it while tp is), and that value not None when skip_none; 0 when
 * none does; -1 with an error set. */
static int mro_find(PyTypeObject *tp, PyObject *name, int skip_none, PyObject **owner, PyObject **value) {
    PyObject *mro = tp->tp_mro;
    if (mro == NULL || !PyTuple_Check(mro)) {
        PyErr_SetString(PyExc_TypeError, "a class without an __mro__");
        return -1;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(mro);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *k = PyTuple_GET_ITEM(mro, i);
        PyObject *ns = namespace_of(k);
        if (ns == NULL) return -1;
        PyObject *v = PyDict_GetItemWithError(ns, name);
        Py_DECREF(ns);   /* (the class holds its namespace, the namespace holds v) */
        if (v == NULL) {
            if (PyErr_Occurred()) return -1;
            continue;
        }
        if (skip_none && v == Py_None) continue;
        *owner = k;
        *value = v;
        return 1;
    }
    return 0;
}

static PyObject *init(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3 || !PyType_Check(args[0]) || !PyType_Check(args[1]) || !PyTuple_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError, "init expects (torch.Tensor, torch.nn.Module, the module's table names)");
        return NULL;
    }
    PyObject *owner, *hook;
    int found = mro_find((PyTypeObject *)args[1], getattr_name, 0, &owner, &hook);
    if (found < 0) return NULL;
    Py_XSETREF(tensor_type, Py_NewRef(args[0]));
    Py_XSETREF(module_type, Py_NewRef(args[1]));
    Py_XSETREF(module_getattr, found ? Py_NewRef(hook) : NULL);
    Py_XSETREF(module_tables, Py_NewRef(args[2]));
    Py_RETURN_NONE;
}

static PyObject *is_instance(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "is_instance expects (value, class or tuple)");
        return NULL;
    }
    PyTypeObject *t = Py_TYPE(args[0]);
    int r;
    if (tensor_type != NULL && PyType_IsSubtype(t, (PyTypeObject *)tensor_type))
        r = PyObject_IsInstance(args[0], args[1]);   /* (torch's metaclass checks: Parameter) */
    else
        r = PyObject_IsSubclass((PyObject *)t, args[1]);
    if (r < 0) return NULL;
    return PyBool_FromLong(r);
}

static PyObject *instance_dict(PyObject *self, PyObject *v) {
    PyTypeObject *t = Py_TYPE(v);
    PyObject *owner, *slot;
    /* (a class that sets __dict__ = None is passed over, as `klass.__dict__.get("__dict__")` is) */
    int found = mro_find(t, dict_name, 1, &owner, &slot);
    if (found < 0) return NULL;
    if (!found || (Py_TYPE(slot) != &PyGetSetDescr_Type && Py_TYPE(slot) != &PyMemberDescr_Type))
        Py_RETURN_NONE;
    Py_INCREF(slot);
    PyObject *d = Py_TYPE(slot)->tp_descr_get(slot, v, (PyObject *)t);
    Py_DECREF(slot);
    if (d == NULL) return NULL;
    if (PyDict_Check(d)) return d;
    Py_DECREF(d);
    Py_RETURN_NONE;
}

static PyObject *class_lookup(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs < 2 || nargs > 3 || !PyType_Check(args[0]) || !PyUnicode_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "class_lookup expects (class, name[, default])");
        return NULL;
    }
    PyObject *owner, *value;
    int found = mro_find((PyTypeObject *)args[0], args[1], 0, &owner, &value);
    if (found < 0) return NULL;
    return Py_NewRef(found ? value : nargs == 3 ? args[2] : Py_None);
}

static PyObject *class_owner(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2 || !PyType_Check(args[0]) || !PyUnicode_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "class_owner expects (class, name)");
        return NULL;
    }
    PyObject *owner, *value;
    int found = mro_find((PyTypeObject *)args[0], args[1], 0, &owner, &value);
    if (found < 0) return NULL;
    return Py_NewRef(found ? owner : Py_None);
}

/* getattr(obj, name, dflt): a new reference, or NULL with an error other than AttributeError set. */
static PyObject *getattr_or(PyObject *obj, PyObject *name, PyObject *dflt) {
    PyObject *res;
#if PY_VERSION_HEX >= 0x030D0000
    int r = PyObject_GetOptionalAttr(obj, name, &res);
#else
    int r = _PyObject_LookupAttr(obj, name, &res);
#endif
    if (r < 0) return NULL;
    return r ? res : Py_NewRef(dflt);
}

/* The value of name in class tp's MRO (borrowed), NULL when none has it; -1 in *err on an error. */
static PyObject *mro_value(PyTypeObject *tp, PyObject *name, int *err) {
    PyObject *owner, *value;
    int found = mro_find(tp, name, 0, &owner, &value);
    *err = found < 0;
    return found > 0 ? value : NULL;
}

/* Does a lookup on an instance of tp run a Python __getattribute__ of tp, or a Python __getattr__
 * (nn.Module's aside) on a miss? Only heap types (class statements) hold Python methods. 1, 0, or
 * -1 with an error set. */
static int python_lookup(PyTypeObject *tp) {
    if (!(tp->tp_flags & Py_TPFLAGS_HEAPTYPE) || PyType_IsSubtype(tp, &PyType_Type)) return 0;
    int err;
    PyObject *v = mro_value(tp, getattribute_name, &err);
    if (err) return -1;
    if (v != NULL && Py_TYPE(v) == &PyFunction_Type) return 1;
    v = mro_value(tp, getattr_name, &err);
    if (err) return -1;
    return v != NULL && Py_TYPE(v) == &PyFunction_Type && v != module_getattr;
}

/* An nn.Module instance's own entry `name` (its __dict__, then its tables, as Module.__getattr__
 * searches them), else dflt: for a module whose class has no such name. */
static PyObject *module_entry(PyObject *obj, PyObject *name, PyObject *dflt) {
    PyObject *d = PyObject_GetAttr(obj, dict_name);
    if (d == NULL) return NULL;
    PyObject *res = NULL;
    int has = PySequence_Contains(d, name);
    if (has < 0) goto done;
    if (has) {
        res = PyObject_GetItem(d, name);
        goto done;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(module_tables); i++) {
        PyObject *t = PyObject_CallMethodOneArg(d, get_name, PyTuple_GET_ITEM(module_tables, i));
        if (t == NULL) goto done;
        if (t != Py_None) {
            has = PySequence_Contains(t, name);
            if (has != 0) {
                res = has < 0 ? NULL : PyObject_GetItem(t, name);
                Py_DECREF(t);
                goto done;
            }
        }
        Py_DECREF(t);
    }
    res = Py_NewRef(dflt);
done:
    Py_DECREF(d);
    return res;
}

static PyObject *callable_attr(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs < 2 || nargs > 3 || !PyUnicode_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "callable_attr expects (object, name[, default])");
        return NULL;
    }
    PyObject *obj = args[0], *name = args[1], *dflt = nargs == 3 ? args[2] : Py_None;
    PyTypeObject *tp = Py_TYPE(obj);
    int hooked = python_lookup(tp);
    if (hooked < 0) return NULL;
    if (hooked) {   /* the normal lookup alone: the class's hooks are program code */
        PyObject *res = PyObject_GenericGetAttr(obj, name);
        if (res == NULL && PyErr_ExceptionMatches(PyExc_AttributeError)) {
            PyErr_Clear();
            return Py_NewRef(dflt);
        }
        return res;
    }
    if (module_type != NULL && PyType_IsSubtype(tp, (PyTypeObject *)module_type)) {
        int err;
        PyObject *hook = mro_value(tp, getattr_name, &err);
        if (err) return NULL;
        PyObject *lookup = mro_value(tp, getattribute_name, &err);
        if (err) return NULL;
        if (hook == module_getattr && lookup == object_getattribute) {
            PyObject *owner, *value;
            int found = mro_find(tp, name, 0, &owner, &value);
            if (found < 0) return NULL;
            if (!found) return module_entry(obj, name, dflt);
        }
    }
    return getattr_or(obj, name, dflt);
}

static PyMethodDef methods[] = {
    {"init", (PyCFunction)(void (*)(void))init, METH_FASTCALL,
     "init(torch.Tensor, torch.nn.Module, table names): what is_instance and callable_attr know of torch"},
    {"callable_attr", (PyCFunction)(void (*)(void))callable_attr, METH_FASTCALL,
     "callable_attr(obj, name, default): getattr for the call checks' probes, no class hook run"},
    {"is_instance", (PyCFunction)(void (*)(void))is_instance, METH_FASTCALL,
     "is_instance(v, cls): issubclass(type(v), cls), isinstance for tensors"},
    {"instance_dict", instance_dict, METH_O, "instance_dict(v): v.__dict__ through its class's slot, or None"},
    {"class_lookup", (PyCFunction)(void (*)(void))class_lookup, METH_FASTCALL,
     "class_lookup(tp, name, default): name's value in the first class of tp.__mro__ that has it"},
    {"class_owner", (PyCFunction)(void (*)(void))class_owner, METH_FASTCALL,
     "class_owner(tp, name): the first class of tp.__mro__ whose namespace has name, or None"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "magpy._realtype", NULL, -1, methods};

PyMODINIT_FUNC PyInit__realtype(void) {
    dict_name = PyUnicode_InternFromString("__dict__");
    getattribute_name = PyUnicode_InternFromString("__getattribute__");
    getattr_name = PyUnicode_InternFromString("__getattr__");
    get_name = PyUnicode_InternFromString("get");
    if (dict_name == NULL || getattribute_name == NULL || getattr_name == NULL || get_name == NULL) return NULL;
    int err;
    object_getattribute = mro_value(&PyBaseObject_Type, getattribute_name, &err);
    if (object_getattribute == NULL) {
        if (!err) PyErr_SetString(PyExc_SystemError, "object has no __getattribute__");
        return NULL;
    }
    Py_INCREF(object_getattribute);
    return PyModule_Create(&module);
}
