/* Transcript Lens: growable buffers and Arrow column builders for `_scan.c`'s
 * `stage` (any table's Python rows). Columns are built in Arrow's
 * layout (bit-packed validity and booleans, int32 offsets for text and lists)
 * and handed to Python as bytes, which `loaders.parts.column_batch` wraps
 * without copying.
 *
 * Include after <Python.h>. */
#ifndef TRANSCRIPT_LENS_COLUMNS_H
#define TRANSCRIPT_LENS_COLUMNS_H
#include <stdint.h>
#include <string.h>

/* --- growable buffers ---------------------------------------------------- */

typedef struct {
    char *p;
    Py_ssize_t len, cap;
} Buf;

static inline int buf_reserve(Buf *b, Py_ssize_t extra) {
    if (extra < 0 || b->len > PY_SSIZE_T_MAX - extra) {
        PyErr_NoMemory();
        return -1;
    }
    if (b->len + extra <= b->cap) return 0;
    Py_ssize_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra) {
        if (cap > PY_SSIZE_T_MAX / 2) {
            cap = b->len + extra;
            break;
        }
        cap *= 2;
    }
    char *p = PyMem_Realloc(b->p, (size_t)cap);
    if (p == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    b->p = p;
    b->cap = cap;
    return 0;
}

static inline int buf_put(Buf *b, const void *src, Py_ssize_t n) {
    if (b->len + n > b->cap && buf_reserve(b, n) < 0) return -1;
    if (n) memcpy(b->p + b->len, src, (size_t)n);
    b->len += n;
    return 0;
}

static inline void buf_free(Buf *b) {
    PyMem_Free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}

/* --- Arrow column builders ------------------------------------------------ */

enum { C_STR, C_I32, C_I64, C_BOOL, C_LIST };

typedef struct {
    int kind;
    Buf data;   /* values (strings: UTF-8 bytes; bool: bits) */
    Buf offs;   /* int32 offsets (strings, lists) */
    Buf valid;  /* validity bits */
    Buf child;  /* list values (int32) */
    Py_ssize_t n, nulls;
} Col;

static inline int col_begin(Col *c) {
    if (c->kind == C_STR || c->kind == C_LIST) {
        int32_t zero = 0;
        if (c->offs.len == 0 && buf_put(&c->offs, &zero, 4) < 0) return -1;
    }
    return 0;
}

static inline int set_bit(Buf *b, Py_ssize_t i, int on) {
    Py_ssize_t need = i / 8 + 1;
    if (b->len < need) {
        Py_ssize_t grow = need - b->len;
        if (buf_reserve(b, grow) < 0) return -1;
        memset(b->p + b->len, 0, (size_t)grow);
        b->len = need;
    }
    if (on) b->p[i / 8] |= (char)(1 << (i % 8));
    return 0;
}

/* Append the next row's validity; the caller appends its value (or a placeholder).
 * Validity bits are written only from a column's first NULL on (rows before it are
 * all valid): most columns have none, and a bit per value was a third of staging. */
static inline int col_valid(Col *c, int ok) {
    if (c->n == 0 && col_begin(c) < 0) return -1;
    if (ok) return c->nulls ? set_bit(&c->valid, c->n, 1) : 0;
    if (c->nulls == 0) {
        Py_ssize_t full = c->n / 8;
        if (buf_reserve(&c->valid, full + 1) < 0) return -1;
        memset(c->valid.p, 0xff, (size_t)full);
        c->valid.len = full;
        for (Py_ssize_t i = full * 8; i < c->n; i++)
            if (set_bit(&c->valid, i, 1) < 0) return -1;
    }
    c->nulls++;
    return set_bit(&c->valid, c->n, 0);
}

/* Append 4 bytes (an offset). */
static inline int put_i32(Buf *b, int32_t v) {
    if (b->len + 4 > b->cap && buf_reserve(b, 4) < 0) return -1;
    memcpy(b->p + b->len, &v, 4);
    b->len += 4;
    return 0;
}

static inline int col_str(Col *c, const char *p, Py_ssize_t len) {
    if (col_valid(c, 1) < 0) return -1;
    if (c->data.len + len > INT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "a staged text column outgrew one Arrow batch");
        return -1;
    }
    if (buf_put(&c->data, p, len) < 0 || put_i32(&c->offs, (int32_t)c->data.len) < 0) return -1;
    c->n++;
    return 0;
}

static inline int col_null(Col *c) {
    if (col_valid(c, 0) < 0) return -1;
    switch (c->kind) {
    case C_STR: {
        int32_t end = (int32_t)c->data.len;
        if (buf_put(&c->offs, &end, 4) < 0) return -1;
        break;
    }
    case C_LIST: {
        int32_t end = (int32_t)(c->child.len / 4);
        if (buf_put(&c->offs, &end, 4) < 0) return -1;
        break;
    }
    case C_I32: {
        int32_t z = 0;
        if (buf_put(&c->data, &z, 4) < 0) return -1;
        break;
    }
    case C_I64: {
        int64_t z = 0;
        if (buf_put(&c->data, &z, 8) < 0) return -1;
        break;
    }
    case C_BOOL:
        if (set_bit(&c->data, c->n, 0) < 0) return -1;
        break;
    }
    c->n++;
    return 0;
}

static inline int col_i32(Col *c, int32_t v) {
    if (col_valid(c, 1) < 0 || put_i32(&c->data, v) < 0) return -1;
    c->n++;
    return 0;
}

static inline int col_i64(Col *c, int64_t v) {
    if (col_valid(c, 1) < 0 || buf_put(&c->data, &v, 8) < 0) return -1;
    c->n++;
    return 0;
}

static inline int col_bool(Col *c, int v) {
    if (col_valid(c, 1) < 0 || set_bit(&c->data, c->n, v) < 0) return -1;
    c->n++;
    return 0;
}

static inline int col_list(Col *c, const int32_t *v, Py_ssize_t n) {
    if (col_valid(c, 1) < 0) return -1;
    if (c->child.len / 4 + n > INT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "a staged list column outgrew one Arrow batch");
        return -1;
    }
    if (buf_put(&c->child, v, n * 4) < 0 || put_i32(&c->offs, (int32_t)(c->child.len / 4)) < 0) return -1;
    c->n++;
    return 0;
}

/* Append a Python value to a column of `kind` ('s' str, 'i' int32, 'l' int64, 'b' bool,
 * 'L' array('i') as list<int32>; None is NULL in any). -1 with TypeError / OverflowError
 * set for a value of another type or out of range. */
static inline int col_put(Col *c, char kind, PyObject *v) {
    if (v == Py_None) return col_null(c);
    switch (kind) {
    case 's': {
        if (!PyUnicode_Check(v)) break;
        Py_ssize_t n;
        const char *p = PyUnicode_AsUTF8AndSize(v, &n);
        return p == NULL ? -1 : col_str(c, p, n);
    }
    case 'i':
    case 'l': {
        if (!PyLong_CheckExact(v)) break;
        int overflow;
        long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
        if (x == -1 && PyErr_Occurred()) return -1;
        if (overflow || (kind == 'i' && (x < INT32_MIN || x > INT32_MAX))) {
            PyErr_SetString(PyExc_OverflowError, "an integer out of its column's range");
            return -1;
        }
        return kind == 'i' ? col_i32(c, (int32_t)x) : col_i64(c, (int64_t)x);
    }
    case 'b':
        if (v == Py_True || v == Py_False) return col_bool(c, v == Py_True);
        break;
    case 'L': {
        if (!PyObject_CheckBuffer(v) || PyUnicode_Check(v) || PyBytes_Check(v)) break;
        Py_buffer view;
        if (PyObject_GetBuffer(v, &view, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0) {
            /* A buffer that is not one C-contiguous block (a strided view): not ours to
             * copy, declined with the TypeError below like any other value; BufferError
             * would escape the caller's fallback (found by fuzz/, target `stage`). */
            if (!PyErr_ExceptionMatches(PyExc_BufferError)) return -1;
            PyErr_Clear();
            break;
        }
        int ok = view.itemsize == 4 && view.format != NULL && strcmp(view.format, "i") == 0;
        int r = ok ? col_list(c, view.buf, view.len / 4) : 0;
        PyBuffer_Release(&view);
        if (ok) return r;
        break;
    }
    }
    PyErr_Format(PyExc_TypeError, "a %.50s in a column of kind '%c'", Py_TYPE(v)->tp_name, kind);
    return -1;
}

static inline PyObject *buf_bytes(Buf *b) { return PyBytes_FromStringAndSize(b->p ? b->p : "", b->len); }

/* (n, null_count, validity | None, offsets | None, data | None, child | None); resets the column. */
static inline PyObject *col_take(Col *c) {
    if (col_begin(c) < 0) return NULL;
    PyObject *valid = c->nulls ? buf_bytes(&c->valid) : Py_NewRef(Py_None);
    PyObject *offs = (c->kind == C_STR || c->kind == C_LIST) ? buf_bytes(&c->offs) : Py_NewRef(Py_None);
    PyObject *data = c->kind == C_LIST ? Py_NewRef(Py_None) : buf_bytes(&c->data);
    PyObject *child = c->kind == C_LIST ? buf_bytes(&c->child) : Py_NewRef(Py_None);
    PyObject *out = NULL;
    if (valid && offs && data && child) out = Py_BuildValue("(nnOOOO)", c->n, c->nulls, valid, offs, data, child);
    Py_XDECREF(valid);
    Py_XDECREF(offs);
    Py_XDECREF(data);
    Py_XDECREF(child);
    if (out == NULL) return NULL;
    c->data.len = c->offs.len = c->valid.len = c->child.len = 0;
    c->n = c->nulls = 0;
    return out;
}

static inline void col_free(Col *c) {
    buf_free(&c->data);
    buf_free(&c->offs);
    buf_free(&c->valid);
    buf_free(&c->child);
}

#endif
