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
#include <string.h>

#define SCAN_MAX_DEPTH 64
#define EXT_PYDANTIC_V2 5

typedef struct {
    const unsigned char *p;
    const unsigned char *end;
} Cursor;

typedef struct {
    Py_ssize_t off;
    Py_ssize_t len;
} Span;

/* Strict UTF-8 (no overlongs, no surrogates, nothing above U+10FFFF): what
 * ormsgpack accepts for a str. */
static int utf8_ok(const unsigned char *s, Py_ssize_t n) {
    Py_ssize_t i = 0;
    while (i < n) {
        unsigned char c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        if (c >= 0xC2 && c <= 0xDF) {
            if (i + 1 >= n || (s[i + 1] & 0xC0) != 0x80) return 0;
            i += 2;
        } else if (c >= 0xE0 && c <= 0xEF) {
            if (i + 2 >= n) return 0;
            unsigned char c1 = s[i + 1];
            if ((c1 & 0xC0) != 0x80 || (s[i + 2] & 0xC0) != 0x80) return 0;
            if (c == 0xE0 && c1 < 0xA0) return 0;  /* overlong */
            if (c == 0xED && c1 > 0x9F) return 0;  /* surrogate */
            i += 3;
        } else if (c >= 0xF0 && c <= 0xF4) {
            if (i + 3 >= n) return 0;
            unsigned char c1 = s[i + 1];
            if ((c1 & 0xC0) != 0x80 || (s[i + 2] & 0xC0) != 0x80 || (s[i + 3] & 0xC0) != 0x80) return 0;
            if (c == 0xF0 && c1 < 0x90) return 0;  /* overlong */
            if (c == 0xF4 && c1 > 0x8F) return 0;  /* above U+10FFFF */
            i += 4;
        } else {
            return 0;
        }
    }
    return 1;
}

static int take(Cursor *c, Py_ssize_t n, const unsigned char **out) {
    if (n < 0 || c->end - c->p < n) return -1;
    *out = c->p;
    c->p += n;
    return 0;
}

static int read_be(Cursor *c, int width, uint64_t *out) {
    const unsigned char *b;
    if (take(c, width, &b) < 0) return -1;
    uint64_t v = 0;
    for (int i = 0; i < width; i++) v = (v << 8) | b[i];
    *out = v;
    return 0;
}

/* Kinds of a value's header, as far as the scanner cares. */
enum { K_SCALAR, K_STR, K_BIN, K_EXT, K_ARRAY, K_MAP };

typedef struct {
    int kind;
    uint64_t n;          /* str/bin/ext: byte length; array/map: entries */
    int ext_code;        /* K_EXT */
    const unsigned char *data; /* str/bin/ext: the bytes */
} Head;

/* Read one value's header; str, bin and ext bodies are consumed and bounds-checked. */
static int head(Cursor *c, Head *h) {
    const unsigned char *b;
    uint64_t n;
    if (take(c, 1, &b) < 0) return -1;
    unsigned char t = b[0];
    h->kind = K_SCALAR;
    if (t <= 0x7f || t >= 0xe0) return 0;
    if (t <= 0x8f) { h->kind = K_MAP; h->n = t & 0x0f; return 0; }
    if (t <= 0x9f) { h->kind = K_ARRAY; h->n = t & 0x0f; return 0; }
    if (t <= 0xbf) { n = t & 0x1f; goto str; }
    switch (t) {
    case 0xc0: case 0xc2: case 0xc3: return 0;
    case 0xc1: return -1;
    case 0xc4: if (read_be(c, 1, &n) < 0) return -1; goto bin;
    case 0xc5: if (read_be(c, 2, &n) < 0) return -1; goto bin;
    case 0xc6: if (read_be(c, 4, &n) < 0) return -1; goto bin;
    case 0xc7: if (read_be(c, 1, &n) < 0) return -1; goto ext;
    case 0xc8: if (read_be(c, 2, &n) < 0) return -1; goto ext;
    case 0xc9: if (read_be(c, 4, &n) < 0) return -1; goto ext;
    case 0xca: return take(c, 4, &b);
    case 0xcb: return take(c, 8, &b);
    case 0xcc: return take(c, 1, &b);
    case 0xcd: return take(c, 2, &b);
    case 0xce: return take(c, 4, &b);
    case 0xcf: return take(c, 8, &b);
    case 0xd0: return take(c, 1, &b);
    case 0xd1: return take(c, 2, &b);
    case 0xd2: return take(c, 4, &b);
    case 0xd3: return take(c, 8, &b);
    case 0xd4: n = 1; goto ext;
    case 0xd5: n = 2; goto ext;
    case 0xd6: n = 4; goto ext;
    case 0xd7: n = 8; goto ext;
    case 0xd8: n = 16; goto ext;
    case 0xd9: if (read_be(c, 1, &n) < 0) return -1; goto str;
    case 0xda: if (read_be(c, 2, &n) < 0) return -1; goto str;
    case 0xdb: if (read_be(c, 4, &n) < 0) return -1; goto str;
    case 0xdc: if (read_be(c, 2, &n) < 0) return -1; h->kind = K_ARRAY; h->n = n; return 0;
    case 0xdd: if (read_be(c, 4, &n) < 0) return -1; h->kind = K_ARRAY; h->n = n; return 0;
    case 0xde: if (read_be(c, 2, &n) < 0) return -1; h->kind = K_MAP; h->n = n; return 0;
    case 0xdf: if (read_be(c, 4, &n) < 0) return -1; h->kind = K_MAP; h->n = n; return 0;
    }
    return -1;
str:
    h->kind = K_STR;
    h->n = n;
    if (take(c, (Py_ssize_t)n, &h->data) < 0) return -1;
    return utf8_ok(h->data, (Py_ssize_t)n) ? 0 : -1;
bin:
    h->kind = K_BIN;
    h->n = n;
    return take(c, (Py_ssize_t)n, &h->data);
ext: {
    const unsigned char *code;
    if (take(c, 1, &code) < 0) return -1;
    h->kind = K_EXT;
    h->ext_code = (signed char)code[0];
    h->n = n;
    return take(c, (Py_ssize_t)n, &h->data);
}
}

static int skip(Cursor *c, int depth);

/* A map key ormsgpack turns into a hashable Python value without complaint;
 * arrays (tuples), maps and extension values as keys send the row to the plain path. */
static int key(Cursor *c, Head *h) {
    if (head(c, h) < 0) return -1;
    return (h->kind == K_SCALAR || h->kind == K_STR || h->kind == K_BIN) ? 0 : -1;
}

static int skip_body(Cursor *c, const Head *h, int depth) {
    if (h->kind == K_ARRAY) {
        /* Each entry takes at least one byte: a count beyond what is left is malformed. */
        if (h->n > (uint64_t)(c->end - c->p)) return -1;
        for (uint64_t i = 0; i < h->n; i++)
            if (skip(c, depth + 1) < 0) return -1;
    } else if (h->kind == K_MAP) {
        if (h->n > (uint64_t)(c->end - c->p)) return -1;
        for (uint64_t i = 0; i < h->n; i++) {
            Head k;
            if (key(c, &k) < 0 || skip(c, depth + 1) < 0) return -1;
        }
    }
    return 0;
}

static int skip(Cursor *c, int depth) {
    Head h;
    if (depth > SCAN_MAX_DEPTH || head(c, &h) < 0) return -1;
    return skip_body(c, &h, depth);
}

static int is_key(const Head *h, const char *name, size_t len) {
    return h->kind == K_STR && h->n == len && memcmp(h->data, name, len) == 0;
}

typedef struct {
    const unsigned char *ts;
    Py_ssize_t ts_len;
    int has_ts;
    int has_values;
    int has_messages;
    Py_ssize_t n_messages;
    Span *spans;        /* n_messages entries, PyMem-allocated */
} Found;

static int scan_messages(Cursor *c, const unsigned char *base, Found *f) {
    Head h;
    if (head(c, &h) < 0 || h.kind != K_ARRAY) return -1;
    if (h.n > (uint64_t)(c->end - c->p)) return -1;
    f->has_messages = 1;
    f->n_messages = (Py_ssize_t)h.n;
    f->spans = PyMem_Malloc(sizeof(Span) * (h.n ? h.n : 1));
    if (f->spans == NULL) return -2;
    for (uint64_t i = 0; i < h.n; i++) {
        Head m;
        if (head(c, &m) < 0 || m.kind != K_EXT || m.ext_code != EXT_PYDANTIC_V2) return -1;
        f->spans[i].off = m.data - base;
        f->spans[i].len = (Py_ssize_t)m.n;
    }
    return 0;
}

static int scan_values(Cursor *c, const unsigned char *base, Found *f) {
    Head h;
    if (head(c, &h) < 0 || h.kind != K_MAP) return -1;
    if (h.n > (uint64_t)(c->end - c->p)) return -1;
    f->has_values = 1;
    for (uint64_t i = 0; i < h.n; i++) {
        Head k;
        if (key(c, &k) < 0) return -1;
        if (is_key(&k, "messages", 8)) {
            if (f->has_messages) return -1;  /* repeated key: ormsgpack keeps the last; not ours to guess */
            int r = scan_messages(c, base, f);
            if (r < 0) return r;
        } else if (skip(c, 2) < 0) {
            return -1;
        }
    }
    return 0;
}

/* 0: accepted; -1: not sure (the plain path decides); -2: out of memory. */
static int scan_checkpoint(const unsigned char *base, Py_ssize_t size, Found *f) {
    Cursor c = {base, base + size};
    Head h;
    if (head(&c, &h) < 0 || h.kind != K_MAP) return -1;
    if (h.n > (uint64_t)(c.end - c.p)) return -1;
    for (uint64_t i = 0; i < h.n; i++) {
        Head k;
        if (key(&c, &k) < 0) return -1;
        if (is_key(&k, "ts", 2)) {
            Head v;
            if (f->has_ts || head(&c, &v) < 0 || v.kind != K_STR) return -1;
            f->has_ts = 1;
            f->ts = v.data;
            f->ts_len = (Py_ssize_t)v.n;
        } else if (is_key(&k, "channel_values", 14)) {
            if (f->has_values) return -1;
            int r = scan_values(&c, base, f);
            if (r < 0) return r;
        } else if (skip(&c, 1) < 0) {
            return -1;
        }
    }
    /* Trailing bytes after the map are ignored, as ormsgpack ignores them. */
    return (f->has_ts && f->has_values) ? 0 : -1;
}

PyDoc_STRVAR(scan_doc,
"scan(blob, prev_blob, prev_spans) -> None | (ts, spans, common, tail)\n\n"
"Walk one msgpack checkpoint in place. None: not sure, use the plain path.\n"
"ts: the checkpoint's ts (str). spans: opaque bytes locating the message\n"
"payloads (pass back as prev_spans with this blob as prev_blob), or None when\n"
"channel_values has no messages. common: how many leading payloads equal the\n"
"previous checkpoint's. tail: the payloads after those, as bytes.");

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
"row(row, payloads, raw_checkpoint, empty) -> RawCheckpoint | None\n\n"
"`sqlite_source._fast_checkpoint` for a `checkpoints` row (thread_id, ns, id, parent,\n"
"type, blob, metadata) in one call: the same checks, the scan, the payload numbering\n"
"into `payloads`, the RawCheckpoint (`raw_checkpoint` is its class, `empty` the\n"
"metadata mapping). None, with `payloads` untouched, whenever it is not sure.");

static PyObject *row(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 4 || !PyTuple_CheckExact(args[0]) || PyTuple_GET_SIZE(args[0]) != 7 || !PyType_Check(args[2])) {
        PyErr_SetString(PyExc_TypeError, "row(row: 7-tuple, payloads, raw_checkpoint: type, empty)");
        return NULL;
    }
    PyObject *r = args[0], *payloads = args[1], *type = args[2], *empty = args[3];
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
    PyObject *out = tp->tp_alloc(tp, 9);
    if (out == NULL) {
        Py_DECREF(messages);
        Py_DECREF(text);
        Py_DECREF(found);
        return NULL;
    }
    PyObject *fields[9] = {thread_id, ns, cid, parent, ts, empty, messages, Py_False, text};
    for (int i = 0; i < 9; i++) PyTuple_SET_ITEM(out, i, Py_NewRef(fields[i]));
    Py_DECREF(messages);
    Py_DECREF(text);
    Py_DECREF(found);
    return out;
}

/* --- checkpoint timestamps ------------------------------------------------ */

/* Days from 1970-01-01 to y-m-d, proleptic Gregorian (H. Hinnant's days_from_civil). */
static int64_t days_from_civil(int64_t y, int m, int d) {
    y -= m <= 2;
    const int64_t era = (y >= 0 ? y : y - 399) / 400;
    const int64_t yoe = y - era * 400;
    const int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static int digits(const unsigned char *s, int n, int *out) {
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return 0;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return 1;
}

/* What LangGraph writes (`datetime.now(timezone.utc).isoformat()`):
 * "YYYY-MM-DDTHH:MM:SS.ffffff+00:00", or without ".ffffff" when the
 * microseconds are 0. 1 and *out = microseconds since the Unix epoch for
 * exactly that shape with a valid date and time; 0 for anything else (the
 * caller's Python parser then decides, so the answer never differs from it). */
static int utc_iso_micros(const unsigned char *s, Py_ssize_t n, int64_t *out) {
    int y, mo, d, h, mi, sec, frac = 0;
    if (n != 25 && n != 32) return 0;
    if (s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':') return 0;
    if (!digits(s, 4, &y) || !digits(s + 5, 2, &mo) || !digits(s + 8, 2, &d) || !digits(s + 11, 2, &h) ||
        !digits(s + 14, 2, &mi) || !digits(s + 17, 2, &sec))
        return 0;
    const unsigned char *tz = s + 19;
    if (n == 32) {
        if (s[19] != '.' || !digits(s + 20, 6, &frac)) return 0;
        tz = s + 26;
    }
    if (memcmp(tz, "+00:00", 6) != 0) return 0;
    static const int month_days[13] = {0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (y < 1 || mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || sec > 59) return 0;
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (d > month_days[mo] + (mo == 2 && leap)) return 0;
    int64_t seconds = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec;
    *out = seconds * 1000000 + frac;
    return 1;
}

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

static PyMethodDef methods[] = {
    {"scan", scan, METH_VARARGS, scan_doc},
    {"row", (PyCFunction)(void (*)(void))row, METH_FASTCALL, row_doc},
    {"ts_list", (PyCFunction)(void (*)(void))ts_list, METH_FASTCALL, ts_list_doc},
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
