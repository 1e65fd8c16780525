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

static PyMethodDef methods[] = {
    {"scan", scan, METH_VARARGS, scan_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "loaders._scan",
    "The SQLite loader's checkpoint skeleton scanner (see _scan.c).", -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__scan(void) { return PyModule_Create(&module); }
