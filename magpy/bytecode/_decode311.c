/* The CPython 3.11 decoder's loop in C (magpy/bytecode/_py311.py, Py311.decode_python): a code
 * object's instructions as Instr objects by byte offset, with the same fields. The monitor decodes
 * every code object a run enters, a few milliseconds of a model's first call in Python.
 *
 *   init(instr_class, tables)   the Instr class and the per-opcode tables the Python decoder reads
 *   decode(code)                {offset: Instr}
 *
 * The tables (see _py311.py, _c_tables) are tuples indexed by opcode (inline cache entries, the
 * opcode's name, which rule of dis gives its argument's value: the ARG_* below) and the decoder's
 * own table of events by opcode name, read at each decode (a test may take a rule away). The arguments of FORMAT_VALUE and MAKE_FUNCTION, rare, are
 * worked out by a Python function of the tables. Instr's fields are written through its slots.
 * Other versions build the module empty (AVAILABLE is False) and decode in Python.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000 && !defined(Py_GIL_DISABLED)
#define MAGPY_DECODE311 1
#endif

#ifdef MAGPY_DECODE311

enum { ARG_NUMBER, ARG_CONST, ARG_NAME, ARG_GLOBAL, ARG_JUMP, ARG_BACK, ARG_LOCAL, ARG_COMPARE, ARG_FORMAT,
       ARG_MAKE_FN, ARG_BINARY };

/* Instr's slots, in this order */
static const char *SLOTS[] = {"opname", "real", "offset", "arg", "argval", "argrepr", "line", "method", "to_bool",
                              "handler", "events"};
enum { S_OPNAME, S_REAL, S_OFFSET, S_ARG, S_ARGVAL, S_ARGREPR, S_LINE, S_METHOD, S_TO_BOOL, S_HANDLER, S_EVENTS,
       N_SLOTS };

static PyTypeObject *instr_type = NULL;
static Py_ssize_t slot_offset[N_SLOTS];
static int caches[256], kinds[256];
static PyObject *opnames = NULL;    /* a tuple of 256 */
static PyObject *events = NULL, *unsupported = NULL;   /* opname -> event (the decoder's own dict); its default */
static PyObject *handlers = NULL;   /* event -> "op_" + event, as they are met */
static PyObject *cmp_ops = NULL, *binary_symbols = NULL, *unknown = NULL, *rare_arg = NULL, *empty = NULL;
static PyObject *to_prefix = NULL, *null_prefix = NULL, *co_lines_name = NULL;
static int op_load_const, op_load_method, op_extended_arg, have_argument;

static int int_at(PyObject *seq, Py_ssize_t i, int *out) {
    long v = PyLong_AsLong(PyTuple_GET_ITEM(seq, i));
    if (v == -1 && PyErr_Occurred()) return -1;
    *out = (int)v;
    return 0;
}

/* init(Instr, (caches, opnames, events by opname, the event of an opname without one, kinds, cmp_op,
 *              binary symbols, dis.UNKNOWN, rare_arg, (LOAD_CONST, LOAD_METHOD, EXTENDED_ARG, HAVE_ARGUMENT))) */
static PyObject *init(PyObject *self, PyObject *args) {
    PyObject *cls, *t;
    if (!PyArg_ParseTuple(args, "O!O!", &PyType_Type, &cls, &PyTuple_Type, &t) || PyTuple_GET_SIZE(t) != 10) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "init expects (Instr, a tuple of 10 tables)");
        return NULL;
    }
    for (int i = 0; i < N_SLOTS; i++) {
        PyObject *d = PyDict_GetItemString(((PyTypeObject *)cls)->tp_dict, SLOTS[i]);
        if (d == NULL || Py_TYPE(d) != &PyMemberDescr_Type ||
            ((PyMemberDescrObject *)d)->d_member->type != T_OBJECT_EX) {
            PyErr_Format(PyExc_TypeError, "Instr has no slot %s", SLOTS[i]);
            return NULL;
        }
        slot_offset[i] = ((PyMemberDescrObject *)d)->d_member->offset;
    }
    for (int i = 0; i < 5; i += (i == 1 ? 3 : 1)) {   /* (0, 1 and 4) */
        PyObject *table = PyTuple_GET_ITEM(t, i);
        if (!PyTuple_Check(table) || PyTuple_GET_SIZE(table) != 256) {
            PyErr_SetString(PyExc_TypeError, "a per-opcode table is not a tuple of 256");
            return NULL;
        }
    }
    for (int op = 0; op < 256; op++)
        if (int_at(PyTuple_GET_ITEM(t, 0), op, &caches[op]) < 0 || int_at(PyTuple_GET_ITEM(t, 4), op, &kinds[op]) < 0)
            return NULL;
    PyObject *ops = PyTuple_GET_ITEM(t, 9);
    if (!PyTuple_Check(ops) || PyTuple_GET_SIZE(ops) != 4 || int_at(ops, 0, &op_load_const) < 0 ||
        int_at(ops, 1, &op_load_method) < 0 || int_at(ops, 2, &op_extended_arg) < 0 || int_at(ops, 3, &have_argument) < 0) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "the opcode numbers are not 4 ints");
        return NULL;
    }
    Py_XSETREF(instr_type, (PyTypeObject *)Py_NewRef(cls));
    Py_XSETREF(opnames, Py_NewRef(PyTuple_GET_ITEM(t, 1)));
    if (!PyDict_Check(PyTuple_GET_ITEM(t, 2)) || !PyUnicode_Check(PyTuple_GET_ITEM(t, 3))) {
        PyErr_SetString(PyExc_TypeError, "the events are not a dict and a default name");
        return NULL;
    }
    Py_XSETREF(events, Py_NewRef(PyTuple_GET_ITEM(t, 2)));
    Py_XSETREF(unsupported, Py_NewRef(PyTuple_GET_ITEM(t, 3)));
    Py_XSETREF(handlers, PyDict_New());
    if (handlers == NULL) return NULL;
    Py_XSETREF(cmp_ops, Py_NewRef(PyTuple_GET_ITEM(t, 5)));
    Py_XSETREF(binary_symbols, Py_NewRef(PyTuple_GET_ITEM(t, 6)));
    Py_XSETREF(unknown, Py_NewRef(PyTuple_GET_ITEM(t, 7)));
    Py_XSETREF(rare_arg, Py_NewRef(PyTuple_GET_ITEM(t, 8)));
    Py_RETURN_NONE;
}

/* Write a new reference into slot i of ins (which steals it); -1 if it is NULL. */
static int put(PyObject *ins, int i, PyObject *v) {
    if (v == NULL) return -1;
    PyObject **p = (PyObject **)((char *)ins + slot_offset[i]);
    Py_XSETREF(*p, v);
    return 0;
}

static PyObject *item(PyObject *tuple, long i) {
    if (!PyTuple_Check(tuple) || i < 0 || i >= PyTuple_GET_SIZE(tuple)) {
        PyErr_SetString(PyExc_IndexError, "an argument outside its table");
        return NULL;
    }
    return Py_NewRef(PyTuple_GET_ITEM(tuple, i));
}

/* The line of each code unit (-1 where it has none), from code.co_lines(); NULL on error. */
static long *unit_lines(PyObject *code, Py_ssize_t units) {
    long *lines = PyMem_Malloc((units ? units : 1) * sizeof(long));
    if (lines == NULL) return (long *)PyErr_NoMemory();
    for (Py_ssize_t u = 0; u < units; u++) lines[u] = -1;
    PyObject *ranges = PyObject_CallMethodNoArgs(code, co_lines_name), *range;
    PyObject *iter = ranges == NULL ? NULL : PyObject_GetIter(ranges);
    Py_XDECREF(ranges);
    if (iter == NULL) goto fail;
    while ((range = PyIter_Next(iter)) != NULL) {
        if (!PyTuple_Check(range) || PyTuple_GET_SIZE(range) != 3) {
            Py_DECREF(range);
            PyErr_SetString(PyExc_TypeError, "co_lines gave something other than (start, end, line)");
            break;
        }
        PyObject *line = PyTuple_GET_ITEM(range, 2);
        if (line != Py_None) {
            Py_ssize_t start = PyLong_AsSsize_t(PyTuple_GET_ITEM(range, 0));
            Py_ssize_t end = PyLong_AsSsize_t(PyTuple_GET_ITEM(range, 1));
            long value = PyLong_AsLong(line);
            for (Py_ssize_t u = start >> 1; u >= 0 && u < (end >> 1) && u < units; u++) lines[u] = value;
        }
        Py_DECREF(range);
        if (PyErr_Occurred()) break;
    }
    Py_DECREF(iter);
    if (PyErr_Occurred()) goto fail;
    return lines;
fail:
    PyMem_Free(lines);
    return NULL;
}

static PyObject *decode(PyObject *self, PyObject *code_obj) {
    if (!PyCode_Check(code_obj)) {
        PyErr_SetString(PyExc_TypeError, "decode expects a code object");
        return NULL;
    }
    if (instr_type == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "decode before init");
        return NULL;
    }
    PyCodeObject *code = (PyCodeObject *)code_obj;
    PyObject *raw = PyCode_GetCode(code);   /* the unspecialised instructions, as dis reads them */
    if (raw == NULL) return NULL;
    const unsigned char *b = (const unsigned char *)PyBytes_AS_STRING(raw);
    Py_ssize_t n = PyBytes_GET_SIZE(raw);
    long *lines = unit_lines(code_obj, n / 2), line_value = -1;
    PyObject *table = lines == NULL ? NULL : PyDict_New();
    PyObject *line = Py_NewRef(Py_None);   /* (carried forward over units with no line) */
    long long extended = 0;
    int skip = 0;
    if (table == NULL) goto fail;
    for (Py_ssize_t offset = 0; offset < n; offset += 2) {
        if (skip) {   /* (inline cache entries: no instruction of their own) */
            skip--;
            continue;
        }
        int op = b[offset];
        skip = caches[op];
        if (lines[offset >> 1] >= 0 && lines[offset >> 1] != line_value) {
            line_value = lines[offset >> 1];
            Py_SETREF(line, PyLong_FromLong(line_value));
            if (line == NULL) goto fail;
        }
        PyObject *ins = instr_type->tp_alloc(instr_type, 0);
        if (ins == NULL) goto fail;
        PyObject *argval = NULL, *argrepr = NULL, *arg = NULL;
        if (op >= have_argument) {
            long long a = b[offset + 1] | extended;
            extended = op == op_extended_arg ? a << 8 : 0;
            if (extended >= 2147483648LL) extended -= 4294967296LL;
            arg = PyLong_FromLongLong(a);
            switch (kinds[op]) {
            case ARG_CONST:
                argval = op == op_load_const ? item(code->co_consts, (long)a) : Py_NewRef(unknown);
                argrepr = argval == NULL ? NULL : argval == unknown ? Py_NewRef(empty) : PyObject_Repr(argval);
                break;
            case ARG_NAME:
            case ARG_LOCAL:
            case ARG_COMPARE:   /* (the argument names an entry of a table: value and words alike) */
                argval = item(kinds[op] == ARG_NAME ? code->co_names
                              : kinds[op] == ARG_LOCAL ? code->co_localsplusnames : cmp_ops, (long)a);
                argrepr = Py_XNewRef(argval);
                break;
            case ARG_GLOBAL:
                argval = item(code->co_names, (long)(a >> 1));
                if (argval != NULL && (a & 1) && PyUnicode_GET_LENGTH(argval))
                    argrepr = PyUnicode_Concat(null_prefix, argval);
                else
                    argrepr = Py_XNewRef(argval);
                break;
            case ARG_JUMP:
            case ARG_BACK: {
                argval = PyLong_FromLongLong(offset + 2 + (kinds[op] == ARG_BACK ? -a : a) * 2);
                PyObject *r = argval == NULL ? NULL : PyObject_Repr(argval);
                argrepr = r == NULL ? NULL : PyUnicode_Concat(to_prefix, r);
                Py_XDECREF(r);
                break;
            }
            case ARG_BINARY:
                argval = Py_XNewRef(arg);
                argrepr = item(binary_symbols, (long)a);
                break;
            case ARG_FORMAT:
            case ARG_MAKE_FN: {
                PyObject *pair = PyObject_CallFunction(rare_arg, "iL", kinds[op], a);
                if (pair != NULL && PyTuple_Check(pair) && PyTuple_GET_SIZE(pair) == 2) {
                    argval = Py_NewRef(PyTuple_GET_ITEM(pair, 0));
                    argrepr = Py_NewRef(PyTuple_GET_ITEM(pair, 1));
                } else if (pair != NULL) {
                    PyErr_SetString(PyExc_TypeError, "rare_arg must return (argval, argrepr)");
                }
                Py_XDECREF(pair);
                break;
            }
            default:
                argval = Py_XNewRef(arg);
                argrepr = Py_NewRef(empty);
            }
        } else {
            extended = 0;
            arg = Py_NewRef(Py_None);
            argval = Py_NewRef(Py_None);
            argrepr = Py_NewRef(empty);
        }
        PyObject *real = PyTuple_GET_ITEM(opnames, op);
        PyObject *event = PyDict_GetItemWithError(events, real);
        PyObject *handler = event == NULL ? NULL : PyDict_GetItemWithError(handlers, event);
        if (event == NULL && !PyErr_Occurred()) event = unsupported;
        if (event != NULL && handler == NULL && !PyErr_Occurred()) {
            PyObject *made = PyUnicode_FromFormat("op_%U", event);
            if (made != NULL && PyDict_SetItem(handlers, event, made) == 0) handler = made;
            Py_XDECREF(made);   /* (the dict holds it) */
        }
        if (handler == NULL) {
            Py_XDECREF(arg);
            Py_XDECREF(argval);
            Py_XDECREF(argrepr);
            Py_DECREF(ins);
            goto fail;
        }
        PyObject *off = PyLong_FromSsize_t(offset);
        int failed = put(ins, S_ARG, arg) | put(ins, S_ARGVAL, argval) | put(ins, S_ARGREPR, argrepr) |
                     put(ins, S_OFFSET, off);
        if (failed || put(ins, S_OPNAME, Py_NewRef(event)) || put(ins, S_REAL, Py_NewRef(real)) ||
            put(ins, S_LINE, Py_NewRef(line)) || put(ins, S_METHOD, Py_NewRef(op == op_load_method ? Py_True : Py_False)) ||
            put(ins, S_TO_BOOL, Py_NewRef(Py_False)) || put(ins, S_HANDLER, Py_NewRef(handler)) ||
            put(ins, S_EVENTS, Py_NewRef(Py_None))) {
            /* (put stole what it was given; a NULL one left an error set) */
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_SystemError, "decode: a field could not be made");
            Py_DECREF(ins);
            goto fail;
        }
        PyObject *key = PyLong_FromSsize_t(offset);
        int r = key == NULL ? -1 : PyDict_SetItem(table, key, ins);
        Py_XDECREF(key);
        Py_DECREF(ins);
        if (r < 0) goto fail;
    }
    Py_DECREF(raw);
    Py_DECREF(line);
    PyMem_Free(lines);
    return table;
fail:
    Py_DECREF(raw);
    Py_XDECREF(line);
    Py_XDECREF(table);
    if (lines != NULL) PyMem_Free(lines);
    return NULL;
}

static PyMethodDef methods[] = {
    {"init", init, METH_VARARGS, "init(Instr, tables): the class and the per-opcode tables of the 3.11 decoder"},
    {"decode", decode, METH_O, "decode(code): {offset: Instr}, as Py311.decode_python"},
    {NULL, NULL, 0, NULL},
};
#else
static PyMethodDef methods[] = {{NULL, NULL, 0, NULL}};
#endif

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_decode311", "The CPython 3.11 decoder's loop in C", -1,
                                    methods};

PyMODINIT_FUNC PyInit__decode311(void) {
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
#ifdef MAGPY_DECODE311
    empty = PyUnicode_InternFromString("");
    to_prefix = PyUnicode_InternFromString("to ");
    null_prefix = PyUnicode_InternFromString("NULL + ");
    co_lines_name = PyUnicode_InternFromString("co_lines");
    if (empty == NULL || to_prefix == NULL || null_prefix == NULL || co_lines_name == NULL ||
        PyModule_AddIntConstant(m, "AVAILABLE", 1) < 0) {
        Py_DECREF(m);
        return NULL;
    }
#else
    if (PyModule_AddIntConstant(m, "AVAILABLE", 0) < 0) {
        Py_DECREF(m);
        return NULL;
    }
#endif
    return m;
}
