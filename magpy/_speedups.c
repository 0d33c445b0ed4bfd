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
        tags[i] = tag;
    }
    return out;
}

static PyMethodDef methods[] = {
    {"dict_versions", dict_versions, METH_O, "Version tags of a tuple of dicts, packed as bytes."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "magpy._speedups", NULL, -1, methods};

PyMODINIT_FUNC PyInit__speedups(void) { return PyModule_Create(&module); }
