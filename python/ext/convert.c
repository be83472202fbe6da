/*
 * convert.c - numpy arrays to Smelt tensors and back, without copying
 * where the dtype and layout allow it.
 */
#include <stdio.h>
#include <string.h>

#include "ext.h"

int smx_dtype_to_npy(smelt_dtype dt)
{
    switch (dt) {
    case SMELT_DTYPE_F32: return NPY_FLOAT32;
    case SMELT_DTYPE_F64: return NPY_FLOAT64;
    case SMELT_DTYPE_F16: return NPY_FLOAT16;
    case SMELT_DTYPE_I8: return NPY_INT8;
    case SMELT_DTYPE_U8: return NPY_UINT8;
    case SMELT_DTYPE_I16: return NPY_INT16;
    case SMELT_DTYPE_I32: return NPY_INT32;
    case SMELT_DTYPE_I64: return NPY_INT64;
    case SMELT_DTYPE_BOOL: return NPY_BOOL;
    case SMELT_DTYPE_U16: return NPY_UINT16;
    case SMELT_DTYPE_U32: return NPY_UINT32;
    case SMELT_DTYPE_U64: return NPY_UINT64;
    default: return -1; /* bf16 has no numpy dtype */
    }
}

smelt_dtype smx_npy_to_dtype(int npy)
{
    for (int d = 1; d < SMELT_DTYPE_COUNT; d++)
        if (smx_dtype_to_npy((smelt_dtype)d) == npy)
            return (smelt_dtype)d;
    /* long long and friends share a width with the sized names */
    if (npy == NPY_LONGLONG && sizeof(long long) == 8)
        return SMELT_DTYPE_I64;
    if (npy == NPY_ULONGLONG && sizeof(long long) == 8)
        return SMELT_DTYPE_U64;
    return SMELT_DTYPE_UNDEFINED;
}

void smx_array_str(PyArrayObject *a, char *buf, size_t size)
{
    smelt_dtype dt = smx_npy_to_dtype(PyArray_TYPE(a));
    int n = snprintf(buf, size, "%s[",
                     dt ? smelt_dtype_name(dt)
                        : PyArray_DESCR(a)->typeobj->tp_name);
    for (int i = 0; i < PyArray_NDIM(a) && n > 0 && (size_t)n < size; i++)
        n += snprintf(buf + n, size - (size_t)n, i ? ",%lld" : "%lld",
                      (long long)PyArray_DIM(a, i));
    if (n > 0 && (size_t)n < size)
        snprintf(buf + n, size - (size_t)n, "]");
}

/* Converts obj (an array, or anything numpy reads: lists, scalars) for
 * input `name`. An ndarray of the wanted dtype that is C-contiguous and
 * aligned is used as it is; one laid out otherwise is copied; one of
 * another dtype needs `cast`. Other objects take the wanted dtype. */
PyArrayObject *smx_as_input(PyObject *obj, const char *name, smelt_dtype want,
                            int cast)
{
    int flags = NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED;
    if (!PyArray_Check(obj)) {
        PyArray_Descr *d =
            want ? PyArray_DescrFromType(smx_dtype_to_npy(want)) : NULL;
        PyArrayObject *a =
            (PyArrayObject *)PyArray_FromAny(obj, d, 0, 0, flags, NULL);
        if (!a)
            return NULL;
        if (!smx_npy_to_dtype(PyArray_TYPE(a))) {
            PyErr_Format(PyExc_TypeError,
                         "input '%s': numpy dtype %s has no Smelt dtype", name,
                         PyArray_DESCR(a)->typeobj->tp_name);
            Py_DECREF(a);
            return NULL;
        }
        return a;
    }
    PyArrayObject *in = (PyArrayObject *)obj;
    smelt_dtype have = smx_npy_to_dtype(PyArray_TYPE(in));
    if (want && have != want && !cast) {
        char buf[256];
        smx_array_str(in, buf, sizeof buf);
        PyErr_Format(PyExc_TypeError,
                     "input '%s': expected dtype %s, given %s (pass cast=True "
                     "to convert)",
                     name, smelt_dtype_name(want), buf);
        return NULL;
    }
    if (!want && !have) {
        PyErr_Format(PyExc_TypeError,
                     "input '%s': numpy dtype %s has no Smelt dtype", name,
                     PyArray_DESCR(in)->typeobj->tp_name);
        return NULL;
    }
    int npy = smx_dtype_to_npy(want ? want : have);
    if (PyArray_TYPE(in) == npy && PyArray_ISCARRAY_RO(in) &&
        PyArray_ISNOTSWAPPED(in))
        return (PyArrayObject *)Py_NewRef(obj);
    return (PyArrayObject *)PyArray_FromAny(obj, PyArray_DescrFromType(npy), 0,
                                            0, flags | NPY_ARRAY_FORCECAST,
                                            NULL);
}

smelt_tensor_t *smx_wrap(smelt_ctx_t *ctx, PyArrayObject *arr)
{
    int64_t dims[SMELT_MAX_DIMS];
    int nd = PyArray_NDIM(arr);
    if (nd > SMELT_MAX_DIMS) {
        PyErr_Format(PyExc_ValueError, "rank %d: Smelt takes at most %d", nd,
                     SMELT_MAX_DIMS);
        return NULL;
    }
    for (int i = 0; i < nd; i++)
        dims[i] = (int64_t)PyArray_DIM(arr, i);
    smelt_tensor_t *t = NULL;
    smelt_status st =
        smelt_tensor_wrap(ctx, smx_npy_to_dtype(PyArray_TYPE(arr)), nd, dims,
                          PyArray_DATA(arr), &t);
    if (st != SMELT_OK)
        return (smelt_tensor_t *)smx_raise(ctx, st);
    return t;
}

PyObject *smx_value_tuple(const char *name, smelt_dtype dt, int nd,
                          const int64_t *dims, const char *const *syms)
{
    PyObject *shape = nd < 0 ? Py_NewRef(Py_None) : PyTuple_New(nd);
    for (int a = 0; shape && a < nd; a++) {
        const char *sym = syms ? syms[a] : NULL;
        PyObject *d = dims[a] >= 0 ? PyLong_FromLongLong(dims[a])
                      : sym        ? PyUnicode_FromString(sym)
                                   : Py_NewRef(Py_None);
        if (!d) {
            Py_CLEAR(shape);
            break;
        }
        PyTuple_SET_ITEM(shape, a, d);
    }
    return shape ? Py_BuildValue("(ssN)", name, smelt_dtype_name(dt), shape)
                 : NULL;
}

static void free_capsule(PyObject *cap)
{
    smelt_tensor_free(PyCapsule_GetPointer(cap, "smelt.tensor"));
}

PyObject *smx_from_tensor(smelt_tensor_t *t)
{
    int npy = smx_dtype_to_npy(smelt_tensor_dtype(t));
    if (npy < 0) {
        PyErr_Format(PyExc_TypeError, "output dtype %s has no numpy dtype",
                     smelt_dtype_name(smelt_tensor_dtype(t)));
        smelt_tensor_free(t);
        return NULL;
    }
    npy_intp dims[SMELT_MAX_DIMS];
    int nd = smelt_tensor_ndim(t);
    for (int i = 0; i < nd; i++)
        dims[i] = (npy_intp)smelt_tensor_dim(t, i);
    PyObject *cap = PyCapsule_New(t, "smelt.tensor", free_capsule);
    if (!cap) {
        smelt_tensor_free(t);
        return NULL;
    }
    PyObject *a =
        PyArray_SimpleNewFromData(nd, dims, npy, smelt_tensor_data(t));
    if (!a) {
        Py_DECREF(cap);
        return NULL;
    }
    if (PyArray_SetBaseObject((PyArrayObject *)a, cap) < 0) {
        Py_DECREF(a);
        return NULL;
    }
    return a;
}
