/* Transcript Lens: the checkpoint skeleton scanner (the SQLite loader's hot path).
 *
 * A SqliteSaver checkpoint re-serializes the whole message list, so a thread's
 * k-th checkpoint carries about k message payloads that the previous one
 * carried too. Unpacking the blob into Python objects (one bytes object per
 * payload) costs most of a load. This scanner walks the msgpack bytes in place,
 * finds `ts` and `channel_values.messages`, compares each message payload with
 * the previous checkpoint's payload at the same position (memcmp), and hands
 * back only the payloads after the common prefix.
 *
 * It never decides anything on its own: it returns None for every input it is
 * not sure about (malformed or truncated msgpack, invalid UTF-8, unusual key
 * types, nesting deeper than SCAN_MAX_DEPTH, repeated keys, a message that is
 * not a pydantic-v2 extension value), and the caller then takes the plain
 * Python path (ormsgpack), which reports what is wrong. For every input it
 * accepts, its answer equals that path's (tests/loaders/test_scan.py checks
 * this against ormsgpack on generated and mutated blobs).
 *
 * Nothing here allocates per payload except the returned tail, and every read
 * is bounds-checked against the blob's length.
 */
#define PY_SSIZE_T_CLEAN
#define _GNU_SOURCE  /* memmem */
#include <Python.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "_columns.h"
#include "_mpscan.h"


/* Walk one msgpack checkpoint in place (`row`'s first step: blob, a bytes object, prev_blob,
 * prev_spans, max_elements). None: not sure (or more values than max_elements), use the plain path. Else (ts, spans, common, tail):
 * ts, the checkpoint's ts (str); spans, opaque bytes locating the message payloads
 * (passed back as prev_spans with this blob as prev_blob), or None when
 * channel_values has no messages; common, how many leading payloads equal the
 * previous checkpoint's; tail, the payloads after those, as bytes. */
static PyObject *scan(PyObject *blob_obj, PyObject *prev_blob, PyObject *prev_spans, Py_ssize_t max_elements) {
    Py_buffer blob;
    if (PyObject_GetBuffer(blob_obj, &blob, PyBUF_SIMPLE) < 0) return NULL;
    Found f = {0};
    PyObject *result = NULL;
    int r = scan_checkpoint(blob.buf, blob.len, max_elements, &f);
    if (r == -2) {
        PyErr_NoMemory();
        goto done;
    }
    if (r < 0) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    PyObject *ts = PyUnicode_DecodeUTF8((const char *)f.ts, f.ts_len, "strict");
    if (ts == NULL) goto done;
    if (!f.has_messages) {
        result = Py_BuildValue("(NOnO)", ts, Py_None, (Py_ssize_t)0, Py_None);
        goto done;
    }
    const unsigned char *base = blob.buf;
    Py_ssize_t common = 0;
    if (prev_blob != Py_None && prev_spans != Py_None && PyBytes_Check(prev_spans) && PyBytes_Check(prev_blob)) {
        const Span *ps = (const Span *)PyBytes_AS_STRING(prev_spans);
        Py_ssize_t pn = PyBytes_GET_SIZE(prev_spans) / (Py_ssize_t)sizeof(Span);
        const unsigned char *pb = (const unsigned char *)PyBytes_AS_STRING(prev_blob);
        Py_ssize_t pb_len = PyBytes_GET_SIZE(prev_blob);
        Py_ssize_t limit = pn < f.n_messages ? pn : f.n_messages;
        /* The spans came from scanning prev_blob; checked anyway, never trusted. */
        while (common < limit && ps[common].len == f.spans[common].len &&
               ps[common].off >= 0 && ps[common].off <= pb_len - ps[common].len &&
               memcmp(pb + ps[common].off, base + f.spans[common].off, (size_t)f.spans[common].len) == 0)
            common++;
    }
    PyObject *tail = PyList_New(f.n_messages - common);
    if (tail == NULL) {
        Py_DECREF(ts);
        goto done;
    }
    for (Py_ssize_t i = common; i < f.n_messages; i++) {
        PyObject *payload = PyBytes_FromStringAndSize((const char *)base + f.spans[i].off, f.spans[i].len);
        if (payload == NULL) {
            Py_DECREF(ts);
            Py_DECREF(tail);
            goto done;
        }
        PyList_SET_ITEM(tail, i - common, payload);
    }
    PyObject *spans = PyBytes_FromStringAndSize((const char *)f.spans, (Py_ssize_t)sizeof(Span) * f.n_messages);
    if (spans == NULL) {
        Py_DECREF(ts);
        Py_DECREF(tail);
        goto done;
    }
    result = Py_BuildValue("(NNnN)", ts, spans, common, tail);
done:
    PyMem_Free(f.spans);
    PyBuffer_Release(&blob);
    return result;
}

/* --- row(): a whole `checkpoints` row, the common case ---------------------------- */

static PyObject *s_blob, *s_spans, *s_prev, *s_prev_versions, *s_index, *s_items, *s_append;

/* Number the payloads of a scanned list into `payloads` (a records.Payloads): the
 * first `common` versions are the previous list's, the tail is looked up or added.
 * Returns the new version array, or NULL with an exception set. */
static PyObject *number(PyObject *payloads, PyObject *blob, PyObject *spans, Py_ssize_t common, PyObject *tail) {
    PyObject *prev_versions = PyObject_GetAttr(payloads, s_prev_versions);
    if (prev_versions == NULL) return NULL;
    PyObject *out = PySequence_GetSlice(prev_versions, 0, common);
    Py_DECREF(prev_versions);
    if (out == NULL) return NULL;
    Py_ssize_t n = PyList_GET_SIZE(tail);
    if (n > 0) {
        PyObject *index = PyObject_GetAttr(payloads, s_index);
        PyObject *items = index ? PyObject_GetAttr(payloads, s_items) : NULL;
        PyObject *append = items ? PyObject_GetAttr(out, s_append) : NULL;
        if (append == NULL || !PyDict_Check(index) || !PyList_Check(items)) {
            if (append != NULL) PyErr_SetString(PyExc_TypeError, "Payloads state is not a dict and a list");
            Py_XDECREF(index); Py_XDECREF(items); Py_XDECREF(append); Py_DECREF(out);
            return NULL;
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *payload = PyList_GET_ITEM(tail, i);
            PyObject *v = PyDict_GetItemWithError(index, payload);  /* borrowed */
            if (v != NULL) {
                Py_INCREF(v);
            } else if (PyErr_Occurred()) {
                break;
            } else {
                v = PyLong_FromSsize_t(PyList_GET_SIZE(items));
                if (v == NULL || PyDict_SetItem(index, payload, v) < 0 || PyList_Append(items, payload) < 0) {
                    Py_XDECREF(v);
                    break;
                }
            }
            PyObject *r = PyObject_CallOneArg(append, v);
            Py_DECREF(v);
            if (r == NULL) break;
            Py_DECREF(r);
        }
        Py_DECREF(index); Py_DECREF(items); Py_DECREF(append);
        if (PyErr_Occurred()) {
            Py_DECREF(out);
            return NULL;
        }
    }
    PyObject *fresh = PyList_New(0);
    if (fresh == NULL || PyObject_SetAttr(payloads, s_prev, fresh) < 0 ||
        PyObject_SetAttr(payloads, s_prev_versions, out) < 0 || PyObject_SetAttr(payloads, s_blob, blob) < 0 ||
        PyObject_SetAttr(payloads, s_spans, spans) < 0) {
        Py_XDECREF(fresh);
        Py_DECREF(out);
        return NULL;
    }
    Py_DECREF(fresh);
    return out;
}

static int is_text(PyObject *o) { return PyUnicode_CheckExact(o); }

PyDoc_STRVAR(row_doc,
"row(row, payloads, raw_checkpoint, max_elements) -> RawCheckpoint | None\n\n"
"`loaders.bundles.fast_checkpoint` for a `checkpoints` row (thread_id, ns, id, parent,\n"
"type, blob, metadata) in one call: the same checks, the scan, the payload numbering\n"
"into `payloads`, the RawCheckpoint (`raw_checkpoint` is its class). None, with\n"
"`payloads` untouched, whenever it is not sure, and for a blob of more than\n"
"`max_elements` msgpack values (`loaders/elements.py`).");

static PyObject *row(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 4 || !PyTuple_CheckExact(args[0]) || PyTuple_GET_SIZE(args[0]) != 7 || !PyType_Check(args[2]) ||
        !PyLong_Check(args[3])) {
        PyErr_SetString(PyExc_TypeError, "row(row: 7-tuple, payloads, raw_checkpoint: type, max_elements: int)");
        return NULL;
    }
    Py_ssize_t max_elements = PyLong_AsSsize_t(args[3]);
    if (max_elements == -1 && PyErr_Occurred()) return NULL;
    PyObject *r = args[0], *payloads = args[1], *type = args[2];
    PyObject *thread_id = PyTuple_GET_ITEM(r, 0), *ns = PyTuple_GET_ITEM(r, 1), *cid = PyTuple_GET_ITEM(r, 2);
    PyObject *parent = PyTuple_GET_ITEM(r, 3), *type_ = PyTuple_GET_ITEM(r, 4), *blob = PyTuple_GET_ITEM(r, 5);
    PyObject *metadata = PyTuple_GET_ITEM(r, 6);
    if (!is_text(type_) || PyUnicode_CompareWithASCIIString(type_, "msgpack") != 0 || !is_text(thread_id) ||
        !is_text(ns) || !is_text(cid) || !PyBytes_CheckExact(blob) || (parent != Py_None && !is_text(parent)))
        Py_RETURN_NONE;
    /* Metadata: JSON-object text without NaN / Infinity (ASCII, so the same test on
     * UTF-8 bytes and on text). */
    const char *md;
    Py_ssize_t md_len;
    if (PyBytes_CheckExact(metadata)) {
        md = PyBytes_AS_STRING(metadata);
        md_len = PyBytes_GET_SIZE(metadata);
    } else if (is_text(metadata)) {
        md = PyUnicode_AsUTF8AndSize(metadata, &md_len);
        if (md == NULL) {  /* lone surrogates: the Python path decides */
            PyErr_Clear();
            Py_RETURN_NONE;
        }
    } else {
        Py_RETURN_NONE;
    }
    if (md_len == 0 || md[0] != '{' || memmem(md, md_len, "NaN", 3) || memmem(md, md_len, "Infinity", 8)) Py_RETURN_NONE;

    PyObject *prev_blob = PyObject_GetAttr(payloads, s_blob);
    if (prev_blob == NULL) return NULL;
    PyObject *prev_spans = PyObject_GetAttr(payloads, s_spans);
    if (prev_spans == NULL) {
        Py_DECREF(prev_blob);
        return NULL;
    }
    PyObject *found = scan(blob, prev_blob, prev_spans, max_elements);
    Py_DECREF(prev_blob);
    Py_DECREF(prev_spans);
    if (found == NULL || found == Py_None) return found;
    PyObject *text = NULL;
    if (PyBytes_CheckExact(metadata)) {
        text = PyUnicode_DecodeUTF8(md, md_len, "strict");
        if (text == NULL) {  /* not UTF-8: the Python path reports it */
            PyErr_Clear();
            Py_DECREF(found);
            Py_RETURN_NONE;
        }
    } else {
        text = Py_NewRef(metadata);
    }
    PyObject *ts = PyTuple_GET_ITEM(found, 0), *spans = PyTuple_GET_ITEM(found, 1);
    PyObject *messages;
    if (spans == Py_None) {
        messages = Py_NewRef(Py_None);
    } else {
        Py_ssize_t common = PyLong_AsSsize_t(PyTuple_GET_ITEM(found, 2));
        messages = number(payloads, blob, spans, common, PyTuple_GET_ITEM(found, 3));
        if (messages == NULL) {
            Py_DECREF(text);
            Py_DECREF(found);
            return NULL;
        }
    }
    PyTypeObject *tp = (PyTypeObject *)type;
    PyObject *out = tp->tp_alloc(tp, 8);
    if (out == NULL) {
        Py_DECREF(messages);
        Py_DECREF(text);
        Py_DECREF(found);
        return NULL;
    }
    PyObject *fields[8] = {thread_id, ns, cid, parent, ts, messages, Py_False, text};
    for (int i = 0; i < 8; i++) PyTuple_SET_ITEM(out, i, Py_NewRef(fields[i]));
    Py_DECREF(messages);
    Py_DECREF(text);
    Py_DECREF(found);
    return out;
}

/* --- checkpoint timestamps (parsed by `utc_iso_micros`, _mpscan.h) -------- */

PyDoc_STRVAR(ts_list_doc,
"ts_list(checkpoints, fallback) -> list\n\n"
"Item 4 (`ts`) of every checkpoint tuple as integer microseconds since the\n"
"Unix epoch: LangGraph's own UTC ISO form is read here, anything else (other\n"
"offsets, other shapes, None, non-strings) is `fallback(value)`.");

static PyObject *ts_list(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "ts_list(checkpoints, fallback)");
        return NULL;
    }
    PyObject *cps = PySequence_Fast(args[0], "ts_list: checkpoints must be a sequence"), *fallback = args[1];
    if (cps == NULL) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(cps);
    PyObject *out = PyList_New(n);
    if (out == NULL) {
        Py_DECREF(cps);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *cp = PySequence_Fast_GET_ITEM(cps, i);
        if (!PyTuple_Check(cp) || PyTuple_GET_SIZE(cp) < 5) {
            Py_DECREF(cps);
            Py_DECREF(out);
            PyErr_SetString(PyExc_TypeError, "ts_list: a checkpoint is not a RawCheckpoint tuple");
            return NULL;
        }
        PyObject *ts = PyTuple_GET_ITEM(cp, 4), *value = NULL;
        int64_t micros;
        if (PyUnicode_CheckExact(ts) && PyUnicode_IS_COMPACT_ASCII(ts) &&
            utc_iso_micros(PyUnicode_DATA(ts), PyUnicode_GET_LENGTH(ts), &micros)) {
            value = PyLong_FromLongLong(micros);
        } else {
            value = PyObject_CallOneArg(fallback, ts);
        }
        if (value == NULL) {
            Py_DECREF(cps);
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, i, value);
    }
    Py_DECREF(cps);
    return out;
}


/* --- stage(): Python rows as Arrow columns ------------------------------------- */

PyDoc_STRVAR(stage_doc,
"stage(rows, kinds) -> [column, ...]\n\n"
"A list of row tuples as Arrow buffers per column (`records.ColumnBuffers`' layout).\n"
"kinds: one letter per column: 's' str, 'i' int32, 'l' int64 (timestamps as integer\n"
"microseconds too), 'b' bool, 'L' array('i') as list<int32>; None is NULL in any.\n"
"Raises TypeError / OverflowError for a value of another type or out of range (the\n"
"caller then converts with pyarrow, which reports it).");

static PyObject *stage(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2 || !PyList_Check(args[0]) || !PyUnicode_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "stage(rows: list, kinds: str)");
        return NULL;
    }
    PyObject *rows = args[0];
    Py_ssize_t ncol;
    const char *kinds = PyUnicode_AsUTF8AndSize(args[1], &ncol);
    if (kinds == NULL) return NULL;
    Col *cols = PyMem_Calloc((size_t)(ncol ? ncol : 1), sizeof(Col));
    if (cols == NULL) return PyErr_NoMemory();
    PyObject *out = NULL;
    for (Py_ssize_t j = 0; j < ncol; j++) {
        char k = kinds[j];
        if (k != 's' && k != 'i' && k != 'l' && k != 'b' && k != 'L') {
            PyErr_SetString(PyExc_ValueError, "stage(): unknown column kind");
            goto done;
        }
        cols[j].kind = k == 's' ? C_STR : k == 'i' ? C_I32 : k == 'l' ? C_I64 : k == 'b' ? C_BOOL : C_LIST;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(rows); i++) {
        PyObject *row = PyList_GET_ITEM(rows, i);
        if (!PyTuple_Check(row) || PyTuple_GET_SIZE(row) != ncol) {
            PyErr_SetString(PyExc_TypeError, "stage(): a row is not a tuple of the table's width");
            goto done;
        }
        for (Py_ssize_t j = 0; j < ncol; j++)
            if (col_put(&cols[j], kinds[j], PyTuple_GET_ITEM(row, j)) < 0) goto done;
    }
    out = PyList_New(ncol);
    if (out == NULL) goto done;
    for (Py_ssize_t j = 0; j < ncol; j++) {
        PyObject *c = col_take(&cols[j]);
        if (c == NULL) {
            Py_CLEAR(out);
            goto done;
        }
        PyList_SET_ITEM(out, j, c);
    }
done:
    for (Py_ssize_t j = 0; j < ncol; j++) col_free(&cols[j]);
    PyMem_Free(cols);
    return out;
}


/* --- elements(): values in a value (`loaders/elements.py`'s `count_py` is the twin) ------ */

/* Nested extension values counted into (`loaders/elements.py`'s DEEP_LEVELS). */
#define ELEMENTS_DEEP_LEVELS 16

/* The values read from [p, end): one top value and what it holds, at most budget + 1; an
 * extension value's payload counted too while levels > 0. Stops at the first malformed
 * header or length with what it counted (ormsgpack reports the damage). No recursion but
 * one level per nested extension (at most `levels`). */
static Py_ssize_t count_values(const unsigned char *p, const unsigned char *end, Py_ssize_t budget, int levels) {
    Py_ssize_t n = 0;
    uint64_t left = 1;
    while (left) {
        if (p >= end) return n;
        unsigned char t = *p++;
        left--;
        if (++n > budget) return n;
        uint64_t len = 0;
        int width = 0;
        if (t <= 0x7f || t >= 0xe0 || t == 0xc0 || t == 0xc2 || t == 0xc3) {
            /* a scalar in its header byte */
        } else if (t <= 0x8f) {
            left += 2 * (uint64_t)(t & 0x0f);
        } else if (t <= 0x9f) {
            left += t & 0x0f;
        } else if (t <= 0xbf) {
            if ((uint64_t)(end - p) < (uint64_t)(t & 0x1f)) return n;
            p += t & 0x1f;
        } else if (t >= 0xca && t <= 0xd3) {
            static const int scalar_width[10] = {4, 8, 1, 2, 4, 8, 1, 2, 4, 8};
            width = scalar_width[t - 0xca];
            if (end - p < width) return n;
            p += width;
        } else if (t >= 0xd4 && t <= 0xd8) {
            len = (uint64_t)1 << (t - 0xd4);
            goto ext;
        } else {
            switch (t) {
            case 0xc4: case 0xd9: width = 1; break;
            case 0xc5: case 0xda: width = 2; break;
            case 0xc6: case 0xdb: width = 4; break;
            case 0xc7: width = 1; break;
            case 0xc8: width = 2; break;
            case 0xc9: width = 4; break;
            case 0xdc: case 0xde: width = 2; break;
            case 0xdd: case 0xdf: width = 4; break;
            default: return n; /* 0xc1: never used */
            }
            if (end - p < width) return n;
            for (int i = 0; i < width; i++) len = (len << 8) | p[i];
            p += width;
            if (t == 0xdc || t == 0xdd) {
                left += len;
            } else if (t == 0xde || t == 0xdf) {
                left += 2 * len;
            } else if (t >= 0xc7 && t <= 0xc9) {
                goto ext;
            } else {
                if ((uint64_t)(end - p) < len) return n;
                p += len;
            }
        }
        goto next;
    ext: {
        const unsigned char *body = p + 1; /* after the type byte */
        if (end - p < 1 || (uint64_t)(end - body) < len) return n;
        if (levels > 0) {
            n += count_values(body, body + len, budget - n, levels - 1);
            if (n > budget) return n;
        }
        p = body + len;
    }
    next:
        if (left > (uint64_t)(end - p)) return n; /* each value takes a byte at least */
    }
    return n;
}

PyDoc_STRVAR(elements_doc,
"elements(data, limit, deep=False) -> int\n\n"
"How many msgpack values `data` holds, at most limit + 1, counted without decoding\n"
"(`loaders.elements.count_py` is the twin): map keys and array entries included, an\n"
"extension value one value, and with `deep` the values of its payload too. Stops at\n"
"malformed bytes with the count so far.");

static PyObject *elements(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs < 2 || nargs > 3 || !PyLong_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "elements(data: bytes-like, limit: int, deep: bool = False)");
        return NULL;
    }
    Py_ssize_t limit = PyLong_AsSsize_t(args[1]);
    if (limit == -1 && PyErr_Occurred()) return NULL;
    int deep = nargs == 3 ? PyObject_IsTrue(args[2]) : 0;
    if (deep < 0) return NULL;
    Py_buffer data;
    if (PyObject_GetBuffer(args[0], &data, PyBUF_SIMPLE) < 0) return NULL;
    const unsigned char *p = data.buf;
    Py_ssize_t n = count_values(p, p + data.len, limit, deep ? ELEMENTS_DEEP_LEVELS : 0);
    PyBuffer_Release(&data);
    return PyLong_FromSsize_t(n);
}


static PyMethodDef methods[] = {
    {"elements", (PyCFunction)(void (*)(void))elements, METH_FASTCALL, elements_doc},
    {"row", (PyCFunction)(void (*)(void))row, METH_FASTCALL, row_doc},
    {"ts_list", (PyCFunction)(void (*)(void))ts_list, METH_FASTCALL, ts_list_doc},
    {"stage", (PyCFunction)(void (*)(void))stage, METH_FASTCALL, stage_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "loaders._scan",
    "The SQLite loader's checkpoint skeleton scanner (see _scan.c).", -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__scan(void) {
    s_blob = PyUnicode_InternFromString("blob");
    s_spans = PyUnicode_InternFromString("spans");
    s_prev = PyUnicode_InternFromString("_prev");
    s_prev_versions = PyUnicode_InternFromString("_prev_versions");
    s_index = PyUnicode_InternFromString("_index");
    s_items = PyUnicode_InternFromString("items");
    s_append = PyUnicode_InternFromString("append");
    if (!s_blob || !s_spans || !s_prev || !s_prev_versions || !s_index || !s_items || !s_append) return NULL;
    return PyModule_Create(&module);
}
