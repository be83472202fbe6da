/*
 * errors.c - smelt.Error: Smelt's error messages as Python exceptions.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ext.h"

PyObject *smx_error;

smelt_ctx_t *smx_ctx(void)
{
    smelt_ctx_t *ctx = smelt_ctx_init();
    if (!ctx)
        PyErr_NoMemory();
    return ctx;
}

/* Reads "FILE:LINE:COL: " at the start of msg (a diagnostic of the
 * script or IR parser); returns how many fields it found (0, 2 or 3). */
static int parse_location(const char *msg, char *file, size_t size, long *line,
                          long *col)
{
    const char *c = msg;
    /* the file name ends at the first ':' followed by a digit */
    while (*c && !(c[0] == ':' && c[1] >= '0' && c[1] <= '9'))
        c++;
    if (!*c || c == msg || (size_t)(c - msg) >= size)
        return 0;
    if (memchr(msg, '\n', (size_t)(c - msg)) ||
        memchr(msg, ' ', (size_t)(c - msg)))
        return 0;
    memcpy(file, msg, (size_t)(c - msg));
    file[c - msg] = 0;
    char *end;
    *line = strtol(c + 1, &end, 10);
    if (*end != ':')
        return 0;
    if (end[1] >= '0' && end[1] <= '9') {
        *col = strtol(end + 1, &end, 10);
        return *end == ':' ? 3 : 2;
    }
    return 2;
}

/* Sets smelt.Error with the message and the attributes status (its
 * name), file, line and column (None when the message has no
 * location). */
PyObject *smx_raise(smelt_ctx_t *ctx, smelt_status st)
{
    const char *msg = smelt_ctx_error(ctx);
    if (!msg || !*msg)
        msg = smelt_status_name(st);
    PyObject *exc = PyObject_CallFunction(smx_error, "s", msg);
    if (!exc)
        return NULL;
    char file[512];
    long line = 0, col = 0;
    int n = parse_location(msg, file, sizeof file, &line, &col);
    PyObject *f = n ? PyUnicode_FromString(file) : Py_NewRef(Py_None);
    PyObject *l = n ? PyLong_FromLong(line) : Py_NewRef(Py_None);
    PyObject *c = n == 3 ? PyLong_FromLong(col) : Py_NewRef(Py_None);
    PyObject *s = PyUnicode_FromString(smelt_status_name(st));
    PyObject *m = PyUnicode_FromString(msg);
    if (f && l && c && s && m && PyObject_SetAttrString(exc, "file", f) == 0 &&
        PyObject_SetAttrString(exc, "line", l) == 0 &&
        PyObject_SetAttrString(exc, "column", c) == 0 &&
        PyObject_SetAttrString(exc, "status", s) == 0 &&
        PyObject_SetAttrString(exc, "message", m) == 0)
        PyErr_SetObject(smx_error, exc);
    Py_XDECREF(f);
    Py_XDECREF(l);
    Py_XDECREF(c);
    Py_XDECREF(s);
    Py_XDECREF(m);
    Py_DECREF(exc);
    return NULL;
}

int smx_errors_init(PyObject *module)
{
    smx_error = PyErr_NewExceptionWithDoc(
        "smelt.Error",
        "An error of the Smelt library: `message`, `status` (the status "
        "name), and `file`, `line`, `column` for errors in a file (None "
        "otherwise).",
        NULL, NULL);
    if (!smx_error)
        return -1;
    Py_INCREF(smx_error);
    if (PyModule_AddObject(module, "Error", smx_error) < 0) {
        Py_DECREF(smx_error);
        return -1;
    }
    return 0;
}
