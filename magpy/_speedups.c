/* MagPy's guard fast path: read the version tags of many dicts at once.
 *
 * CPython keeps a version tag in every dict (PEP 509, ma_version_tag) that changes whenever
 * the dict changes. A record remembers the tags of the dicts its held-state guards read (module
 * __dict__s, parameter tables, globals, hook tables); while all tags are unchanged those guards
 * need not be re-evaluated. The field exists up to CPython 3.13; on later versions the module
 * is not built and MagPy evaluates every guard on every call.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#if PY_VERSION_HEX >= 0x030E0000
#error "ma_version_tag is gone in CPython 3.14"
#endif

#if PY_VERSION_HEX >= 0x030D0000
static uint64_t fresh_tag = (uint64_t)1 << 63;   /* above any real tag */
#endif

/* dict_versions(dicts: tuple[dict, ...]) -> bytes: the tags packed as native uint64s, so a
 * record compares them with one bytes comparison (no int objects). */
static PyObject *dict_versions(PyObject *self, PyObject *arg) {
    if (!PyTuple_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "dict_versions expects a tuple of dicts");
        return NULL;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(arg);
    PyObject *out = PyBytes_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(uint64_t));
    if (out == NULL) return NULL;
    uint64_t *tags = (uint64_t *)PyBytes_AS_STRING(out);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *d = PyTuple_GET_ITEM(arg, i);
        if (!PyDict_Check(d)) {
            Py_DECREF(out);
            PyErr_SetString(PyExc_TypeError, "dict_versions expects a tuple of dicts");
            return NULL;
        }
_Pragma("GCC diagnostic push")
_Pragma("GCC diagnostic ignored \"-Wdeprecated-declarations\"")
        uint64_t tag = ((PyDictObject *)d)->ma_version_tag;
_Pragma("GCC diagnostic pop")
#if PY_VERSION_HEX >= 0x030D0000
        /* 3.13 stores an instance attribute into the object's inline values without moving the
         * tag of its materialised __dict__ (whose ma_values point at them): such a dict gets a
         * tag never seen before, so the guards reading it always run. */
        if (((PyDictObject *)d)->ma_values != NULL) tag = ++fresh_tag;
#endif
        tags[i] = tag;
    }
    return out;
}

/* versions_same(dicts, tags) -> bool: ``dict_versions(dicts) == tags`` without building the
 * bytes object; stops at the first tag that moved. */
static PyObject *versions_same(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2 || !PyTuple_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "versions_same expects (tuple of dicts, bytes)");
        return NULL;
    }
    if (!PyBytes_Check(args[1])) Py_RETURN_FALSE;   /* nothing recorded yet */
    Py_ssize_t n = PyTuple_GET_SIZE(args[0]);
    if (PyBytes_GET_SIZE(args[1]) != n * (Py_ssize_t)sizeof(uint64_t)) Py_RETURN_FALSE;
    const uint64_t *tags = (const uint64_t *)PyBytes_AS_STRING(args[1]);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *d = PyTuple_GET_ITEM(args[0], i);
        if (!PyDict_Check(d)) Py_RETURN_FALSE;
_Pragma("GCC diagnostic push")
_Pragma("GCC diagnostic ignored \"-Wdeprecated-declarations\"")
        if (((PyDictObject *)d)->ma_version_tag != tags[i]) Py_RETURN_FALSE;
_Pragma("GCC diagnostic pop")
#if PY_VERSION_HEX >= 0x030D0000
        if (((PyDictObject *)d)->ma_values != NULL) Py_RETURN_FALSE;   /* see dict_versions */
#endif
    }
    Py_RETURN_TRUE;
}

/* check_held(objs, types, dicts) -> bool: for every i, ``type(objs[i]) is types[i]`` (unless
 * types[i] is None) and ``objs[i].__dict__ is dicts[i]`` (unless dicts[i] is None). The checks
 * a record must repeat on every call (a module's class can be reassigned, an instance can get
 * a new ``__dict__``, and neither changes a version tag), in one pass over the objects. */
static PyObject *check_held(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3 || !PyTuple_Check(args[0]) || !PyTuple_Check(args[1]) || !PyTuple_Check(args[2])
            || PyTuple_GET_SIZE(args[1]) != PyTuple_GET_SIZE(args[0])
            || PyTuple_GET_SIZE(args[2]) != PyTuple_GET_SIZE(args[0])) {
        PyErr_SetString(PyExc_TypeError, "check_held expects three tuples of one length");
        return NULL;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(args[0]);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = PyTuple_GET_ITEM(args[0], i);
        PyObject *t = PyTuple_GET_ITEM(args[1], i);
        PyObject *d = PyTuple_GET_ITEM(args[2], i);
        if (t != Py_None && (PyObject *)Py_TYPE(o) != t) Py_RETURN_FALSE;
        if (d != Py_None) {
            PyObject *cur = PyObject_GenericGetDict(o, NULL);
            if (cur == NULL) return NULL;
            Py_DECREF(cur);
            if (cur != d) Py_RETURN_FALSE;
        }
    }
    Py_RETURN_TRUE;
}

/* check_funcs(funcs, kinds, expected) -> bool: ``funcs[i].__code__ is expected[i]`` where
 * kinds[i] is 'c' (``__defaults__`` for 'd', ``__kwdefaults__`` for 'k'). Function objects have
 * no version tag and their attributes can be rebound: these are read on every call. */
static PyObject *check_funcs(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3 || !PyTuple_Check(args[0]) || !PyBytes_Check(args[1]) || !PyTuple_Check(args[2])
            || PyBytes_GET_SIZE(args[1]) != PyTuple_GET_SIZE(args[0])
            || PyTuple_GET_SIZE(args[2]) != PyTuple_GET_SIZE(args[0])) {
        PyErr_SetString(PyExc_TypeError, "check_funcs expects (tuple, bytes, tuple) of one length");
        return NULL;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(args[0]);
    const char *kinds = PyBytes_AS_STRING(args[1]);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *f = PyTuple_GET_ITEM(args[0], i);
        PyObject *want = PyTuple_GET_ITEM(args[2], i);
        if (!PyFunction_Check(f)) Py_RETURN_FALSE;
        PyObject *cur;
        switch (kinds[i]) {
            case 'c': cur = PyFunction_GET_CODE(f); break;
            case 'd': cur = PyFunction_GET_DEFAULTS(f); break;
            case 'k': cur = PyFunction_GET_KW_DEFAULTS(f); break;
            default:
                PyErr_SetString(PyExc_ValueError, "check_funcs: unknown kind");
                return NULL;
        }
        if (cur == NULL) cur = Py_None;
        if (cur != want) Py_RETURN_FALSE;
    }
    Py_RETURN_TRUE;
}

static PyMethodDef methods[] = {
    {"versions_same", (PyCFunction)(void (*)(void))versions_same, METH_FASTCALL,
     "Whether the version tags of a tuple of dicts are the packed tags given."},
    {"check_funcs", (PyCFunction)(void (*)(void))check_funcs, METH_FASTCALL,
     "f.__code__ / __defaults__ / __kwdefaults__ is expected, for parallel tuples."},
    {"dict_versions", dict_versions, METH_O, "Version tags of a tuple of dicts, packed as bytes."},
    {"check_held", (PyCFunction)(void (*)(void))check_held, METH_FASTCALL,
     "type(o) is t and o.__dict__ is d for parallel tuples of objects, types and dicts."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "magpy._speedups", NULL, -1, methods};

PyMODINIT_FUNC PyInit__speedups(void) { return PyModule_Create(&module); }
