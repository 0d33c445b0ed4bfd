/* The CPython 3.11 trace driver in C: the events of magpy/capture/_settrace.py without the
 * interpreter's Python-level trampoline.
 *
 * sys.settrace hands each event to a Python function through a trampoline that first copies the
 * frame's fast locals into its f_locals dict and, after the call, copies them back; the value
 * stack is then read with ctypes, one object per slot. A monitor run of a model delivers some
 * ten thousand instruction events, so both are a large share of what it costs. This driver is
 * the C trace function itself (PyEval_SetTrace): it reads the value stack straight from the
 * frame and calls the monitor's hooks with the same arguments the Python driver passes:
 *
 *   call        hooks.enter_frame(frame); when true the frame gets opcode events (no line events),
 *               when its QuietMap the same, quiet from its first instruction (see below)
 *   opcode      hooks.instruction(frame, frame.f_lasti, stack)    (stack: bottom to top, NULL slots
 *                                                                  as the NULL object it was given)
 *   return      hooks.leave_frame(frame, value)
 *   exception   hooks.exception(frame, exc)
 *
 * A frame is followed once enter_frame said so: its f_trace is set to the `idle` callable given at
 * start (the Python driver sets its own local tracer there), so events of other frames are dropped
 * with one pointer test, and a frame that outlives the run meets a tracer installed later with a
 * callable that ignores it.
 *
 * Quiet instructions. Most instructions of a model's code only move references (LOAD_FAST,
 * STORE_FAST, POP_TOP, jumps): while nothing waits for the next event of their frame and nothing
 * of the run watches every instruction, the monitor has nothing to do at them. The monitor says so
 * per code object with a QuietMap (one level per byte offset, 0 for an instruction it always needs) and per event: when instruction()
 * returns the frame's QuietMap, the map becomes the frame's f_trace and the frame's next events at
 * offsets whose level is at most the run's (set_quiet) are not delivered; any other return value
 * puts `idle` back (every event delivered). A frame starts with `idle`, so its first event always
 * reaches the monitor. set_quiet(0), which the monitor calls whenever something of the run looks at
 * every instruction, delivers every event of every frame until it says otherwise. enter_frame may
 * answer a frame's QuietMap: the frame is followed and quiet from its first instruction.
 *
 * Calls the monitor would refuse are not offered to it: frames of the code objects and files the
 * hooks name at start (`skipped`: framework frames, MagPy's own), and every frame entered while
 * set_opaque(True) holds (the monitor is inside a call it takes whole). enter_frame says no to
 * those without changing anything; the driver says it in C.
 *
 * The frame layout is 3.11's (Include/internal/pycore_frame.h), the
 * layout magpy/capture/_py311.py documents; the capture self-check (_probe.py) compares what this
 * driver delivers with ctypes reads before any program is monitored. On other versions the module
 * builds empty (AVAILABLE is False) and the Python driver runs.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <frameobject.h>

#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000 && !defined(Py_GIL_DISABLED)
#define MAGPY_CTRACE 1
#endif

#ifdef MAGPY_CTRACE

/* _PyInterpreterFrame (3.11) */
typedef struct {
    PyObject *f_func;
    PyObject *f_globals;
    PyObject *f_builtins;
    PyObject *f_locals;
    PyCodeObject *f_code;
    PyObject *frame_obj;
    void *previous;
    void *prev_instr;
    int stacktop;
    char is_entry;
    char owner;
    PyObject *localsplus[1];
} IFrame;

/* PyFrameObject (3.11) */
typedef struct {
    PyObject_HEAD
    PyObject *f_back;
    IFrame *f_frame;
    PyObject *f_trace;
    int f_lineno;
    char f_trace_lines;
    char f_trace_opcodes;
    char f_fast_as_locals;
} Frame;

/* which byte offsets of one code object need no event while the frame is quiet */
typedef struct {
    PyObject_HEAD
    PyObject *flags;    /* bytes: flags[offset] != 0 for a quiet instruction */
} QuietMap;

static void quiet_dealloc(QuietMap *q) {
    Py_XDECREF(q->flags);
    Py_TYPE(q)->tp_free((PyObject *)q);
}

/* As a frame's f_trace it is also what a tracer installed later (sys.settrace) calls: it ignores the frame. */
static PyObject *quiet_call(PyObject *self, PyObject *args, PyObject *kwargs) {
    Py_RETURN_NONE;
}

static PyObject *quiet_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
    PyObject *flags;
    if (!PyArg_ParseTuple(args, "S:QuietMap", &flags)) return NULL;
    QuietMap *q = (QuietMap *)type->tp_alloc(type, 0);
    if (q == NULL) return NULL;
    Py_INCREF(flags);
    q->flags = flags;
    return (PyObject *)q;
}

static PyTypeObject QuietMapType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "magpy.capture._ctrace.QuietMap",
    .tp_basicsize = sizeof(QuietMap),
    .tp_dealloc = (destructor)quiet_dealloc,
    .tp_call = quiet_call,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = quiet_new,
    .tp_doc = "QuietMap(flags: bytes): the byte offsets of a code object whose events a quiet frame skips",
};

static long quiet = 0;   /* which quiet instructions frames may skip now: flags 1..quiet (set_quiet) */
static int opaque = 0;   /* inside a call the monitor takes whole: no frame is entered (set_opaque) */

typedef struct {
    PyObject_HEAD
    PyObject *enter_frame;
    PyObject *instruction;
    PyObject *leave_frame;
    PyObject *exception;
    PyObject *null;     /* what a NULL stack slot reads as */
    PyObject *idle;     /* the f_trace of a followed frame */
    PyObject *skip_ids;    /* frozenset of id(code) whose frames are never entered, or NULL */
    PyObject *skip_files;  /* frozenset of co_filename whose frames are never entered, or NULL */
} Tracer;

static void tracer_dealloc(Tracer *t) {
    Py_XDECREF(t->enter_frame);
    Py_XDECREF(t->instruction);
    Py_XDECREF(t->leave_frame);
    Py_XDECREF(t->exception);
    Py_XDECREF(t->null);
    Py_XDECREF(t->idle);
    Py_XDECREF(t->skip_ids);
    Py_XDECREF(t->skip_files);
    Py_TYPE(t)->tp_free((PyObject *)t);
}

static PyTypeObject TracerType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "magpy.capture._ctrace.Tracer",
    .tp_basicsize = sizeof(Tracer),
    .tp_dealloc = (destructor)tracer_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "the hooks of one capture (see start)",
};

/* The frame's value stack as a new list, bottom to top. */
static PyObject *stack_of(Frame *f, PyObject *null) {
    IFrame *fr = f->f_frame;
    int first = fr->f_code->co_nlocalsplus;
    Py_ssize_t depth = fr->stacktop - first;
    if (depth < 0) depth = 0;
    PyObject *stack = PyList_New(depth);
    if (stack == NULL) return NULL;
    PyObject **slot = fr->localsplus + first;
    for (Py_ssize_t i = 0; i < depth; i++) {
        PyObject *v = slot[i] != NULL ? slot[i] : null;
        Py_INCREF(v);
        PyList_SET_ITEM(stack, i, v);
    }
    return stack;
}

/* Is a frame of `code` one the hooks never enter (1), or not (0)? -1 with an error set. */
static int skipped(Tracer *t, PyCodeObject *code) {
    if (t->skip_ids != NULL) {
        PyObject *key = PyLong_FromVoidPtr(code);
        if (key == NULL) return -1;
        int hit = PySet_Contains(t->skip_ids, key);
        Py_DECREF(key);
        if (hit) return hit;
    }
    if (t->skip_files != NULL) return PySet_Contains(t->skip_files, code->co_filename);
    return 0;
}

static int trace_event(PyObject *obj, PyFrameObject *frame, int what, PyObject *arg) {
    Tracer *t = (Tracer *)obj;
    Frame *f = (Frame *)frame;
    PyObject *res = NULL;
    switch (what) {
    case PyTrace_CALL: {
        if (opaque) return 0;
        int skip = skipped(t, f->f_frame->f_code);
        if (skip < 0) goto error;
        if (skip) return 0;
        res = PyObject_CallOneArg(t->enter_frame, (PyObject *)frame);
        if (res == NULL) goto error;
        int yes = PyObject_IsTrue(res);
        if (yes < 0) {
            Py_DECREF(res);
            goto error;
        }
        if (yes) {
            f->f_trace_opcodes = 1;
            f->f_trace_lines = 0;
            PyObject *first = Py_TYPE(res) == &QuietMapType ? res : t->idle;
            Py_INCREF(first);
            Py_XSETREF(f->f_trace, first);
        }
        Py_DECREF(res);
        return 0;
    }
    case PyTrace_OPCODE: {
        PyObject *ft = f->f_trace;
        if (ft == NULL) return 0;
        int lasti = PyFrame_GetLasti(frame);
        if (quiet && Py_TYPE(ft) == &QuietMapType) {
            PyObject *flags = ((QuietMap *)ft)->flags;
            if (lasti >= 0 && lasti < PyBytes_GET_SIZE(flags)) {
                unsigned char level = (unsigned char)PyBytes_AS_STRING(flags)[lasti];
                if (level && level <= quiet) return 0;
            }
        }
        PyObject *stack = stack_of(f, t->null);
        if (stack == NULL) goto error;
        PyObject *offset = PyLong_FromLong(lasti);
        if (offset == NULL) {
            Py_DECREF(stack);
            goto error;
        }
        PyObject *args[3] = {(PyObject *)frame, offset, stack};
        res = PyObject_Vectorcall(t->instruction, args, 3, NULL);
        Py_DECREF(offset);
        Py_DECREF(stack);
        if (res == NULL) goto error;
        /* the frame's QuietMap: quiet from here on; anything else: every event */
        PyObject *next = Py_TYPE(res) == &QuietMapType ? res : t->idle;
        if (f->f_trace != next) {
            Py_INCREF(next);
            Py_XSETREF(f->f_trace, next);
        }
        Py_DECREF(res);
        return 0;
    }
    case PyTrace_RETURN: {
        if (f->f_trace == NULL) return 0;
        PyObject *args[2] = {(PyObject *)frame, arg != NULL ? arg : Py_None};
        res = PyObject_Vectorcall(t->leave_frame, args, 2, NULL);
        break;
    }
    case PyTrace_EXCEPTION: {
        if (f->f_trace == NULL) return 0;
        PyObject *exc = (arg != NULL && PyTuple_Check(arg) && PyTuple_GET_SIZE(arg) > 1) ? PyTuple_GET_ITEM(arg, 1)
                                                                                          : Py_None;
        PyObject *args[2] = {(PyObject *)frame, exc};
        res = PyObject_Vectorcall(t->exception, args, 2, NULL);
        break;
    }
    default:
        return 0;
    }
    if (res == NULL) goto error;
    Py_DECREF(res);
    return 0;
error:
    /* as sys.settrace's trampoline does when its tracer raises: tracing stops, the error propagates */
    PyEval_SetTrace(NULL, NULL);
    Py_CLEAR(f->f_trace);
    return -1;
}

/* The trace function. A hook may stop this tracer while it runs (a split ends the monitor run
 * inside an instruction event, and the thread's reference to the Tracer goes with it): the event
 * keeps a reference of its own, so that what it does after the hook returns (t->idle, the frame's
 * f_trace) reads the Tracer, never freed memory. */
static int trace(PyObject *obj, PyFrameObject *frame, int what, PyObject *arg) {
    Py_INCREF(obj);
    int r = trace_event(obj, frame, what, arg);
    Py_DECREF(obj);
    return r;
}

/* start(hooks, null, idle): install the driver on this thread. */
static PyObject *start(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "start expects (hooks, null, idle)");
        return NULL;
    }
    Tracer *t = PyObject_New(Tracer, &TracerType);
    if (t == NULL) return NULL;
    t->enter_frame = PyObject_GetAttrString(args[0], "enter_frame");
    t->instruction = PyObject_GetAttrString(args[0], "instruction");
    t->leave_frame = PyObject_GetAttrString(args[0], "leave_frame");
    t->exception = PyObject_GetAttrString(args[0], "exception");
    Py_INCREF(args[1]);
    t->null = args[1];
    Py_INCREF(args[2]);
    t->idle = args[2];
    t->skip_ids = t->skip_files = NULL;
    if (!t->enter_frame || !t->instruction || !t->leave_frame || !t->exception) {
        Py_DECREF(t);
        return NULL;
    }
    /* hooks.skipped: (code ids, file names) enter_frame refuses whatever the run's state, or absent */
    PyObject *skip = PyObject_GetAttrString(args[0], "skipped");
    if (skip == NULL) {
        PyErr_Clear();
    } else {
        if (!PyTuple_Check(skip) || PyTuple_GET_SIZE(skip) != 2 || !PyFrozenSet_Check(PyTuple_GET_ITEM(skip, 0)) ||
            !PyFrozenSet_Check(PyTuple_GET_ITEM(skip, 1))) {
            Py_DECREF(skip);
            Py_DECREF(t);
            PyErr_SetString(PyExc_TypeError, "hooks.skipped must be a (frozenset, frozenset) tuple");
            return NULL;
        }
        t->skip_ids = Py_NewRef(PyTuple_GET_ITEM(skip, 0));
        t->skip_files = Py_NewRef(PyTuple_GET_ITEM(skip, 1));
        Py_DECREF(skip);
    }
    quiet = 0;
    opaque = 0;
    PyEval_SetTrace(trace, (PyObject *)t);   /* (takes its own reference) */
    Py_DECREF(t);
    Py_RETURN_NONE;
}

/* set_quiet(level): quiet frames skip the instructions flagged 1..level (0: every event is
 * delivered, the state at start). */
static PyObject *set_quiet(PyObject *self, PyObject *level) {
    long v = PyLong_AsLong(level);
    if (v == -1 && PyErr_Occurred()) return NULL;
    quiet = v;
    Py_RETURN_NONE;
}

/* set_opaque(flag): while true, no frame is entered (the monitor is inside a call it takes whole). */
static PyObject *set_opaque(PyObject *self, PyObject *flag) {
    int v = PyObject_IsTrue(flag);
    if (v < 0) return NULL;
    opaque = v;
    Py_RETURN_NONE;
}

/* stack(frame, null) -> list: the value stack of a frame inside an opcode event (the probe's check). */
static PyObject *stack(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2 || !PyFrame_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "stack expects (frame, null)");
        return NULL;
    }
    return stack_of((Frame *)args[0], args[1]);
}

/* frame_function(frame): the function object the frame runs (_PyInterpreterFrame.f_func), or None. */
static PyObject *frame_function(PyObject *self, PyObject *frame) {
    if (!PyFrame_Check(frame)) {
        PyErr_SetString(PyExc_TypeError, "frame_function expects a frame");
        return NULL;
    }
    PyObject *fn = ((Frame *)frame)->f_frame->f_func;
    if (fn == NULL) Py_RETURN_NONE;
    return Py_NewRef(fn);
}

static PyMethodDef methods[] = {
    {"frame_function", frame_function, METH_O, "frame_function(frame): the function object the frame runs, or None"},
    {"start", (PyCFunction)(void (*)(void))start, METH_FASTCALL, "start(hooks, null, idle): trace this thread"},
    {"stack", (PyCFunction)(void (*)(void))stack, METH_FASTCALL, "stack(frame, null): a frame's value stack"},
    {"set_quiet", set_quiet, METH_O, "set_quiet(level): quiet frames skip the instructions flagged 1..level"},
    {"set_opaque", set_opaque, METH_O, "set_opaque(flag): while true, calls enter no frame"},
    {NULL, NULL, 0, NULL},
};

#else

static PyMethodDef methods[] = {{NULL, NULL, 0, NULL}};

#endif

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_ctrace", "MagPy's C trace driver (CPython 3.11)", -1,
                                    methods};

PyMODINIT_FUNC PyInit__ctrace(void) {
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
#ifdef MAGPY_CTRACE
    if (PyType_Ready(&TracerType) < 0 || PyType_Ready(&QuietMapType) < 0 ||
        PyModule_AddObjectRef(m, "QuietMap", (PyObject *)&QuietMapType) < 0 ||
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
