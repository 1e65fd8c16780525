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


/* Walk one msgpack checkpoint in place (`row`'s first step; args: blob, prev_blob,
 * prev_spans). None: not sure, use the plain path. Else (ts, spans, common, tail):
 * ts, the checkpoint's ts (str); spans, opaque bytes locating the message payloads
 * (passed back as prev_spans with this blob as prev_blob), or None when
 * channel_values has no messages; common, how many leading payloads equal the
 * previous checkpoint's; tail, the payloads after those, as bytes. */
static PyObject *scan(PyObject *self, PyObject *args) {
    Py_buffer blob;
    PyObject *prev_blob, *prev_spans;
    if (!PyArg_ParseTuple(args, "y*OO", &blob, &prev_blob, &prev_spans)) return NULL;
    Found f = {0};
    PyObject *result = NULL;
    int r = scan_checkpoint(blob.buf, blob.len, &f);
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
"row(row, payloads, raw_checkpoint) -> RawCheckpoint | None\n\n"
"`sqlite_source._fast_checkpoint` for a `checkpoints` row (thread_id, ns, id, parent,\n"
"type, blob, metadata) in one call: the same checks, the scan, the payload numbering\n"
"into `payloads`, the RawCheckpoint (`raw_checkpoint` is its class). None, with\n"
"`payloads` untouched, whenever it is not sure.");

static PyObject *row(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3 || !PyTuple_CheckExact(args[0]) || PyTuple_GET_SIZE(args[0]) != 7 || !PyType_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError, "row(row: 7-tuple, payloads, raw_checkpoint: type)");
        return NULL;
    }
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
    PyObject *scan_args = PyTuple_Pack(3, blob, prev_blob, prev_spans);
    Py_DECREF(prev_blob);
    Py_DECREF(prev_spans);
    if (scan_args == NULL) return NULL;
    PyObject *found = scan(NULL, scan_args);
    Py_DECREF(scan_args);
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


/* --- message(): one message payload as a `decode.Message` ------------------------ */

/* `decode._message_from_fields` for the common shape, in C. It declines (None) whatever
 * it would not answer exactly as the Python decoder does, and that decoder decides:
 * extension values anywhere, floats and binary data in a field that is written as JSON,
 * map keys that are not text, repeated keys, a field of an unexpected type (Python
 * reports it), nesting deeper than SCAN_MAX_DEPTH. JSON text is written byte for byte
 * as orjson writes it (compact, keys in order, only '"', '\\' and control characters
 * escaped, \b \t \n \f \r short, others \u00xx). */

#define MSG_MAX_KEYS 64

typedef struct {
    const unsigned char *p; /* start of the value's encoding */
    const unsigned char *end;
} Val;

/* The value at c, checked and skipped: 0, or -1 (malformed, an extension value, a map
 * with a key that is not text or a repeated key, too deep). */
static int plain_value(Cursor *c, int depth, Val *out);

/* Skip a value `plain_value` already checked: no UTF-8 check again. */
static void skip_checked(Cursor *c) {
    Head h;
    if (head_of(c, &h, 1) < 0) return;
    uint64_t n = h.kind == K_ARRAY ? h.n : h.kind == K_MAP ? 2 * h.n : 0;
    for (uint64_t i = 0; i < n; i++) skip_checked(c);
}

/* The value at c (already checked) as a Val, skipped. */
static void take_checked(Cursor *c, Val *out) {
    out->p = c->p;
    skip_checked(c);
    out->end = c->p;
}

static int same_key(const Head *a, const Head *b) { return a->n == b->n && memcmp(a->data, b->data, (size_t)a->n) == 0; }

static int plain_body(Cursor *c, const Head *h, int depth) {
    if (h->kind == K_EXT) return -1;
    if (h->kind == K_ARRAY) {
        if (h->n > (uint64_t)(c->end - c->p)) return -1;
        for (uint64_t i = 0; i < h->n; i++)
            if (plain_value(c, depth + 1, NULL) < 0) return -1;
    } else if (h->kind == K_MAP) {
        if (h->n > MSG_MAX_KEYS || h->n > (uint64_t)(c->end - c->p)) return -1;
        Head keys[MSG_MAX_KEYS];
        for (uint64_t i = 0; i < h->n; i++) {
            if (head(c, &keys[i]) < 0 || keys[i].kind != K_STR) return -1;
            for (uint64_t j = 0; j < i; j++)
                if (same_key(&keys[i], &keys[j])) return -1;
            if (plain_value(c, depth + 1, NULL) < 0) return -1;
        }
    }
    return 0;
}

static int plain_value(Cursor *c, int depth, Val *out) {
    Head h;
    const unsigned char *start = c->p;
    if (depth > SCAN_MAX_DEPTH || head(c, &h) < 0 || plain_body(c, &h, depth) < 0) return -1;
    if (out) {
        out->p = start;
        out->end = c->p;
    }
    return 0;
}

static int json_str(Buf *b, const unsigned char *s, Py_ssize_t n) {
    static const char hex[] = "0123456789abcdef";
    if (buf_reserve(b, n + 2) < 0) return -1;
    b->p[b->len++] = '"';
    Py_ssize_t run = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        unsigned char ch = s[i];
        if (ch >= 0x20 && ch != '"' && ch != '\\') continue;
        if (buf_put(b, s + run, i - run) < 0) return -1;
        run = i + 1;
        char esc[6] = {'\\', 0, 0, 0, 0, 0};
        int len = 2;
        switch (ch) {
        case '"': esc[1] = '"'; break;
        case '\\': esc[1] = '\\'; break;
        case '\b': esc[1] = 'b'; break;
        case '\t': esc[1] = 't'; break;
        case '\n': esc[1] = 'n'; break;
        case '\f': esc[1] = 'f'; break;
        case '\r': esc[1] = 'r'; break;
        default:
            esc[1] = 'u', esc[2] = '0', esc[3] = '0', esc[4] = hex[ch >> 4], esc[5] = hex[ch & 15];
            len = 6;
        }
        if (buf_put(b, esc, len) < 0) return -1;
    }
    if (buf_put(b, s + run, n - run) < 0) return -1;
    return buf_put(b, "\"", 1);
}

/* Decimal digits of v (negative when neg) into out (>= 21 bytes): the length. */
static int put_int(char *out, uint64_t v, int neg) {
    char tmp[24];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    int len = 0;
    if (neg) out[len++] = '-';
    while (n) out[len++] = tmp[--n];
    return len;
}

/* JSON text of an already checked value (`plain_value`): 0, -1 declined, -2 error set. */
static int json_value(Cursor *c, Buf *b) {
    const unsigned char *t = c->p;
    Head h;
    if (head_of(c, &h, 1) < 0) return -1;
    char num[32];
    int len;
    switch (h.kind) {
    case K_STR:
        return json_str(b, h.data, (Py_ssize_t)h.n) < 0 ? -2 : 0;
    case K_ARRAY:
        if (buf_put(b, "[", 1) < 0) return -2;
        for (uint64_t i = 0; i < h.n; i++) {
            if (i && buf_put(b, ",", 1) < 0) return -2;
            int r = json_value(c, b);
            if (r < 0) return r;
        }
        return buf_put(b, "]", 1) < 0 ? -2 : 0;
    case K_MAP:
        if (buf_put(b, "{", 1) < 0) return -2;
        for (uint64_t i = 0; i < h.n; i++) {
            Head k;
            if (head_of(c, &k, 1) < 0 || k.kind != K_STR) return -1;
            if ((i && buf_put(b, ",", 1) < 0) || json_str(b, k.data, (Py_ssize_t)k.n) < 0 || buf_put(b, ":", 1) < 0) return -2;
            int r = json_value(c, b);
            if (r < 0) return r;
        }
        return buf_put(b, "}", 1) < 0 ? -2 : 0;
    case K_SCALAR:
        break;
    default: /* bin, ext: not JSON as orjson writes it */
        return -1;
    }
    unsigned char tag = t[0];
    if (tag == 0xc0) return buf_put(b, "null", 4) < 0 ? -2 : 0;
    if (tag == 0xc2) return buf_put(b, "false", 5) < 0 ? -2 : 0;
    if (tag == 0xc3) return buf_put(b, "true", 4) < 0 ? -2 : 0;
    if (tag <= 0x7f) {
        len = put_int(num, tag, 0);
    } else if (tag >= 0xe0) {
        len = put_int(num, (uint64_t)(256 - tag), 1);
    } else if (tag >= 0xcc && tag <= 0xcf) {
        int w = 1 << (tag - 0xcc);
        uint64_t v = 0;
        for (int i = 0; i < w; i++) v = (v << 8) | t[1 + i];
        len = put_int(num, v, 0);
    } else if (tag >= 0xd0 && tag <= 0xd3) {
        int w = 1 << (tag - 0xd0);
        uint64_t v = 0;
        for (int i = 0; i < w; i++) v = (v << 8) | t[1 + i];
        int64_t x = w == 8 ? (int64_t)v : w == 4 ? (int32_t)v : w == 2 ? (int16_t)v : (int8_t)v;
        len = x < 0 ? put_int(num, (uint64_t)0 - (uint64_t)x, 1) : put_int(num, (uint64_t)x, 0);
    } else {
        return -1; /* floats */
    }
    return buf_put(b, num, len) < 0 ? -2 : 0;
}

/* JSON text is built here (kept between calls: the GIL is held). */
static Buf json_buf;

/* A checked value's JSON as str, or NULL: *declined set when declined, else an error. */
static PyObject *json_of(const Val *v, int *declined) {
    Cursor c = {v->p, v->end};
    json_buf.len = 0;
    int r = json_value(&c, &json_buf);
    PyObject *out = NULL;
    if (r == -1) *declined = 1;
    else if (r == 0) out = PyUnicode_DecodeUTF8(json_buf.p ? json_buf.p : "", json_buf.len, "strict");
    if (json_buf.cap > (1 << 20)) buf_free(&json_buf); /* don't keep a rare huge one */
    return out;
}

/* The value as an integer (not a bool): 1 and *out; 0 when it is another kind of value. */
static int int_value(const Val *v, int64_t *out, int *unsigned_big) {
    Cursor c = {v->p, v->end};
    Head h;
    if (head_of(&c, &h, 1) < 0 || h.kind != K_SCALAR) return 0;
    unsigned char tag = v->p[0];
    *unsigned_big = 0;
    if (tag <= 0x7f) *out = tag;
    else if (tag >= 0xe0) *out = (signed char)tag;
    else if (tag >= 0xcc && tag <= 0xcf) {
        int w = 1 << (tag - 0xcc);
        uint64_t x = 0;
        for (int i = 0; i < w; i++) x = (x << 8) | v->p[1 + i];
        if (x > INT64_MAX) *unsigned_big = 1;
        *out = (int64_t)x;
    } else if (tag >= 0xd0 && tag <= 0xd3) {
        int w = 1 << (tag - 0xd0);
        uint64_t x = 0;
        for (int i = 0; i < w; i++) x = (x << 8) | v->p[1 + i];
        *out = w == 8 ? (int64_t)x : w == 4 ? (int32_t)x : w == 2 ? (int16_t)x : (int8_t)x;
    } else return 0;
    return 1;
}

static int is_nil(const Val *v) { return v->p == NULL || v->p[0] == 0xc0; }

/* Text of a str value (else NULL). */
static const unsigned char *str_value(const Val *v, Py_ssize_t *n) {
    Cursor c = {v->p, v->end};
    Head h;
    if (v->p == NULL || head_of(&c, &h, 1) < 0 || h.kind != K_STR) return NULL;
    *n = (Py_ssize_t)h.n;
    return h.data;
}

/* `_opt_str`: None for absent/nil, the str, or declined (Python reports the type). */
static int opt_str(const Val *v, PyObject **out) {
    if (is_nil(v)) {
        *out = Py_NewRef(Py_None);
        return 0;
    }
    Py_ssize_t n;
    const unsigned char *s = str_value(v, &n);
    if (s == NULL) return -1;
    *out = PyUnicode_DecodeUTF8((const char *)s, n, "strict");
    return *out ? 0 : -2;
}

/* The entry `name` of a checked map value (Val of its value), 1 found / 0 not. */
static int map_get(const Val *map, const char *name, size_t len, Val *out) {
    Cursor c = {map->p, map->end};
    Head h;
    if (head_of(&c, &h, 1) < 0 || h.kind != K_MAP) return 0;
    for (uint64_t i = 0; i < h.n; i++) {
        Head k;
        Val v;
        if (head_of(&c, &k, 1) < 0) return 0;
        take_checked(&c, &v);
        if (is_key(&k, name, len)) {
            *out = v;
            return 1;
        }
    }
    return 0;
}

static int head_kind(const Val *v, Head *h) {
    Cursor c = {v->p, v->end};
    return head_of(&c, h, 1) < 0 ? -1 : h->kind;
}

/* Python truthiness of a checked value (`if additional:`); -1 for a float (declined). */
static int truthy(const Val *v) {
    Head h;
    int kind = head_kind(v, &h);
    if (kind == K_STR || kind == K_BIN || kind == K_ARRAY || kind == K_MAP) return h.n != 0;
    unsigned char tag = v->p[0];
    if (tag == 0xc0 || tag == 0xc2) return 0;
    if (tag == 0xc3) return 1;
    if (tag == 0xca || tag == 0xcb) return -1;
    int64_t x;
    int big;
    if (int_value(v, &x, &big)) return big || x != 0;
    return -1;
}

static const char *const type_by_class[][2] = {
    {"HumanMessage", "human"}, {"AIMessage", "ai"}, {"ToolMessage", "tool"}, {"SystemMessage", "system"},
    {"ChatMessage", "chat"}, {"FunctionMessage", "function"}, {"RemoveMessage", "remove"},
    {"HumanMessageChunk", "HumanMessageChunk"}, {"AIMessageChunk", "AIMessageChunk"},
    {"ToolMessageChunk", "ToolMessageChunk"}, {"SystemMessageChunk", "SystemMessageChunk"},
    {"ChatMessageChunk", "ChatMessageChunk"}, {"FunctionMessageChunk", "FunctionMessageChunk"},
};
static const char *const role_by_type[][2] = {
    {"human", "user"}, {"ai", "assistant"}, {"tool", "tool"}, {"system", "system"},
    {"HumanMessageChunk", "user"}, {"AIMessageChunk", "assistant"}, {"ToolMessageChunk", "tool"}, {"SystemMessageChunk", "system"},
};

static const char *lookup(const char *const table[][2], size_t n, const unsigned char *s, Py_ssize_t len) {
    for (size_t i = 0; i < n; i++)
        if ((Py_ssize_t)strlen(table[i][0]) == len && memcmp(table[i][0], s, (size_t)len) == 0) return table[i][1];
    return NULL;
}

enum { F_TYPE, F_ROLE, F_CONTENT, F_TOOL_CALLS, F_USAGE, F_RESPONSE, F_ADDITIONAL, F_ID, F_NAME, F_TOOL_CALL_ID, F_STATUS, F_N };
static const char *const field_names[F_N] = {
    "type", "role", "content", "tool_calls", "usage_metadata", "response_metadata", "additional_kwargs", "id", "name",
    "tool_call_id", "status",
};
static const size_t field_lens[F_N] = {4, 4, 7, 10, 14, 17, 17, 2, 4, 12, 6};

PyDoc_STRVAR(message_doc,
"message(payload, message_type) -> Message | None\n\n"
"`decode.decode_message` of an ext-5 payload (bytes) for the common shape, in C;\n"
"None whenever the Python decoder must decide (see _scan.c).");

static PyObject *message(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2 || !PyBytes_Check(args[0]) || !PyType_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "message(payload: bytes, message_type: type)");
        return NULL;
    }
    const unsigned char *base = (const unsigned char *)PyBytes_AS_STRING(args[0]);
    Cursor c = {base, base + PyBytes_GET_SIZE(args[0])};
    Head top;
    if (head(&c, &top) < 0 || top.kind != K_ARRAY || top.n < 3 || top.n > (uint64_t)(c.end - c.p)) Py_RETURN_NONE;
    Val module, cls, fields;
    if (plain_value(&c, 1, &module) < 0 || plain_value(&c, 1, &cls) < 0 || plain_value(&c, 1, &fields) < 0) Py_RETURN_NONE;
    for (uint64_t i = 3; i < top.n; i++)
        if (plain_value(&c, 1, NULL) < 0) Py_RETURN_NONE;
    /* (bytes after the array are ignored, as ormsgpack ignores them) */
    Head fh;
    if (head_kind(&fields, &fh) != K_MAP) Py_RETURN_NONE;
    Val f[F_N];
    memset(f, 0, sizeof f);
    {
        Cursor fc = {fields.p, fields.end};
        Head h;
        head_of(&fc, &h, 1);
        for (uint64_t i = 0; i < h.n; i++) {
            Head k;
            Val v;
            head_of(&fc, &k, 1);
            take_checked(&fc, &v);
            for (int j = 0; j < F_N; j++)
                if (is_key(&k, field_names[j], field_lens[j])) {
                    f[j] = v;
                    break;
                }
        }
    }
    Py_ssize_t cls_len = 0;
    const unsigned char *cls_name = str_value(&cls, &cls_len);

    /* type and role */
    Py_ssize_t type_len = 0, n;
    const unsigned char *type_s = NULL;
    const char *type_c = NULL;
    if (!is_nil(&f[F_TYPE])) {
        if ((type_s = str_value(&f[F_TYPE], &type_len)) == NULL) Py_RETURN_NONE; /* Python: not a string */
    } else if (cls_name != NULL) {
        type_c = lookup(type_by_class, sizeof type_by_class / sizeof *type_by_class, cls_name, cls_len);
    }
    if (type_s == NULL && type_c == NULL && (cls_name != NULL || str_value(&f[F_ROLE], &n) == NULL)) Py_RETURN_NONE; /* no type */
    const char *role;
    if (type_s != NULL) role = lookup(role_by_type, sizeof role_by_type / sizeof *role_by_type, type_s, type_len);
    else if (type_c != NULL) role = lookup(role_by_type, sizeof role_by_type / sizeof *role_by_type, (const unsigned char *)type_c, (Py_ssize_t)strlen(type_c));
    else role = NULL;
    if (role == NULL) role = "other";
    int assistant = strcmp(role, "assistant") == 0, tool = strcmp(role, "tool") == 0;

    PyObject *items[19] = {0};
    PyObject *out = NULL;
    int declined = 0, r;
#define TAKE(i, expr) do { if ((items[i] = (expr)) == NULL) goto fail; } while (0)
#define OPT(i, val) do { r = opt_str(val, &items[i]); if (r == -1) { declined = 1; goto fail; } if (r < 0) goto fail; } while (0)

    OPT(0, &f[F_ID]);
    if (type_s != NULL) TAKE(1, PyUnicode_DecodeUTF8((const char *)type_s, type_len, "strict"));
    else if (type_c != NULL) TAKE(1, PyUnicode_FromString(type_c));
    else TAKE(1, Py_NewRef(Py_None));
    TAKE(2, PyUnicode_FromString(role));
    OPT(3, &f[F_ROLE]);
    OPT(4, &f[F_NAME]);

    /* content: a string as-is, a block list's text parts joined with a newline */
    long non_text = 0;
    if (is_nil(&f[F_CONTENT])) {
        TAKE(5, PyUnicode_FromStringAndSize("", 0));
    } else {
        Head ch;
        int kind = head_kind(&f[F_CONTENT], &ch);
        if (kind == K_STR) {
            TAKE(5, PyUnicode_DecodeUTF8((const char *)ch.data, (Py_ssize_t)ch.n, "strict"));
        } else if (kind == K_ARRAY) {
            Buf text = {0};
            Cursor bc = {f[F_CONTENT].p, f[F_CONTENT].end};
            Head ah;
            head_of(&bc, &ah, 1);
            int parts = 0;
            for (uint64_t i = 0; i < ah.n; i++) {
                Val block, t, tx;
                take_checked(&bc, &block);
                Head bh;
                int bk = head_kind(&block, &bh);
                const unsigned char *s = NULL;
                Py_ssize_t sl = 0, tl;
                const unsigned char *ts;
                if (bk == K_STR) {
                    s = bh.data;
                    sl = (Py_ssize_t)bh.n;
                } else if (bk == K_MAP && map_get(&block, "type", 4, &t) && (ts = str_value(&t, &tl)) != NULL && tl == 4 &&
                           memcmp(ts, "text", 4) == 0 && map_get(&block, "text", 4, &tx)) {
                    s = str_value(&tx, &sl);
                }
                if (s == NULL) {
                    non_text++;
                    continue;
                }
                if ((parts++ && buf_put(&text, "\n", 1) < 0) || buf_put(&text, s, sl) < 0) {
                    buf_free(&text);
                    goto fail;
                }
            }
            items[5] = PyUnicode_DecodeUTF8(text.p ? text.p : "", text.len, "strict");
            buf_free(&text);
            if (items[5] == NULL) goto fail;
        } else {
            declined = 1; /* Python reports the type */
            goto fail;
        }
    }
    TAKE(6, PyLong_FromLong(non_text));

    /* tool calls (assistant messages) */
    Py_ssize_t ncalls = 0;
    PyObject *names = PyList_New(0);
    if (names == NULL) goto fail;
    if (assistant && !is_nil(&f[F_TOOL_CALLS])) {
        Head th;
        if (head_kind(&f[F_TOOL_CALLS], &th) != K_ARRAY) {
            Py_DECREF(names);
            declined = 1;
            goto fail;
        }
        ncalls = (Py_ssize_t)th.n;
        Cursor tc = {f[F_TOOL_CALLS].p, f[F_TOOL_CALLS].end};
        head_of(&tc, &th, 1);
        for (uint64_t i = 0; i < th.n; i++) {
            Val call, nm;
            Head ch;
            Py_ssize_t nl;
            const unsigned char *ns;
            take_checked(&tc, &call);
            if (head_kind(&call, &ch) == K_MAP && map_get(&call, "name", 4, &nm) && (ns = str_value(&nm, &nl)) != NULL) {
                PyObject *s = PyUnicode_DecodeUTF8((const char *)ns, nl, "strict");
                if (s == NULL || PyList_Append(names, s) < 0) {
                    Py_XDECREF(s);
                    Py_DECREF(names);
                    goto fail;
                }
                Py_DECREF(s);
            }
        }
    }
    if (ncalls > 0) {
        items[7] = json_of(&f[F_TOOL_CALLS], &declined);
        if (items[7] == NULL) {
            Py_DECREF(names);
            goto fail;
        }
    } else {
        items[7] = Py_NewRef(Py_None);
    }
    TAKE(8, PyLong_FromSsize_t(ncalls));
    items[9] = PyList_AsTuple(names);
    Py_DECREF(names);
    if (items[9] == NULL) goto fail;
    if (tool) {
        OPT(10, &f[F_TOOL_CALL_ID]);
        OPT(11, &f[F_STATUS]);
    } else {
        TAKE(10, Py_NewRef(Py_None));
        TAKE(11, Py_NewRef(Py_None));
    }

    /* tokens */
    static const char *const token_keys[3] = {"input_tokens", "output_tokens", "total_tokens"};
    if (is_nil(&f[F_USAGE])) {
        for (int i = 0; i < 3; i++) TAKE(12 + i, Py_NewRef(Py_None));
    } else {
        Head uh;
        if (head_kind(&f[F_USAGE], &uh) != K_MAP) {
            declined = 1;
            goto fail;
        }
        for (int i = 0; i < 3; i++) {
            Val tv;
            int64_t x;
            int big;
            if (!map_get(&f[F_USAGE], token_keys[i], strlen(token_keys[i]), &tv) || is_nil(&tv)) {
                TAKE(12 + i, Py_NewRef(Py_None));
            } else if (int_value(&tv, &x, &big) && !big) {
                TAKE(12 + i, PyLong_FromLongLong(x));
            } else {
                declined = 1; /* not an integer, or out of the 64-bit range: Python reports it */
                goto fail;
            }
        }
    }

    /* model and the JSON fields */
    Head rh;
    int response = !is_nil(&f[F_RESPONSE]) && head_kind(&f[F_RESPONSE], &rh) == K_MAP && rh.n > 0;
    items[15] = NULL;
    if (response) {
        static const char *const model_keys[3] = {"model_name", "model", "model_id"};
        for (int i = 0; i < 3 && items[15] == NULL; i++) {
            Val mv;
            Py_ssize_t ml;
            const unsigned char *ms;
            if (map_get(&f[F_RESPONSE], model_keys[i], strlen(model_keys[i]), &mv) && (ms = str_value(&mv, &ml)) != NULL)
                TAKE(15, PyUnicode_DecodeUTF8((const char *)ms, ml, "strict"));
        }
    }
    if (items[15] == NULL) items[15] = Py_NewRef(Py_None);
    if (is_nil(&f[F_USAGE])) TAKE(16, Py_NewRef(Py_None));
    else if ((items[16] = json_of(&f[F_USAGE], &declined)) == NULL) goto fail;
    if (!response) TAKE(17, Py_NewRef(Py_None));
    else if ((items[17] = json_of(&f[F_RESPONSE], &declined)) == NULL) goto fail;
    int add = f[F_ADDITIONAL].p == NULL ? 0 : truthy(&f[F_ADDITIONAL]);
    if (add < 0) {
        declined = 1;
        goto fail;
    }
    if (!add) TAKE(18, Py_NewRef(Py_None));
    else if ((items[18] = json_of(&f[F_ADDITIONAL], &declined)) == NULL) goto fail;

    PyTypeObject *tp = (PyTypeObject *)args[1];
    out = tp->tp_alloc(tp, 19);
    if (out == NULL) goto fail;
    for (int i = 0; i < 19; i++) PyTuple_SET_ITEM(out, i, items[i]);
    return out;
fail:
    for (int i = 0; i < 19; i++) Py_XDECREF(items[i]);
    if (declined && !PyErr_Occurred()) Py_RETURN_NONE;
    return NULL;
#undef TAKE
#undef OPT
}

static PyMethodDef methods[] = {
    {"row", (PyCFunction)(void (*)(void))row, METH_FASTCALL, row_doc},
    {"ts_list", (PyCFunction)(void (*)(void))ts_list, METH_FASTCALL, ts_list_doc},
    {"stage", (PyCFunction)(void (*)(void))stage, METH_FASTCALL, stage_doc},
    {"message", (PyCFunction)(void (*)(void))message, METH_FASTCALL, message_doc},
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
