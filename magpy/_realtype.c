/* The C half of magpy/realtype.py: type tests and class lookups the monitor makes on nearly every
 * event, with the semantics of the Python definitions there (which run where this is not built).
 *
 *   is_instance(v, cls)          issubclass(type(v), cls); isinstance(v, cls) for a tensor
 *   instance_dict(v)             v.__dict__ through the slot its class made, else None
 *   class_lookup(tp, name, d)    the value of `name` in the first class of tp.__mro__ that has it, else d (None)
 *   class_owner(tp, name)        that class, else None
 *
 * The Python spellings walk tp.__mro__ and build a mapping proxy per class (`k.__dict__`); here
 * each class's namespace is read directly. No attribute lookup on `v` runs (see realtype.py).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

static PyObject *tensor_type = NULL;   /* torch.Tensor (init) */
static PyObject *dict_name = NULL;     /* "__dict__" */

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

static PyObject *init(PyObject *self, PyObject *tensor) {
    if (!PyType_Check(tensor)) {
        PyErr_SetString(PyExc_TypeError, "init expects torch.Tensor");
        return NULL;
    }
    Py_XSETREF(tensor_type, Py_NewRef(tensor));
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

static PyMethodDef methods[] = {
    {"init", init, METH_O, "init(torch.Tensor): the class whose instances is_instance asks isinstance"},
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
    if (dict_name == NULL) return NULL;
    return PyModule_Create(&module);
}
