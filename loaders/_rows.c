/* Transcript Lens: the SQLite reader's `checkpoints` rows, stepped and scanned where SQLite holds them.
 *
 * The Python reader fetched every row through the sqlite3 module: a 7-tuple and
 * a copy of every checkpoint blob (tens of kB) into a Python bytes object, then
 * `_scan.row` walked that copy. Here a `Store` (its own read-only connection to
 * the same file, through the same read-ahead VFS) runs the reader's query with
 * SQLite's C API, and a `Rows` iterator hands the rows over one thread at a
 * time, each row either
 *
 *   - a `RawCheckpoint`, made exactly as `_scan.row` makes it (the same checks,
 *     the same in-place walk of the blob, `_mpscan.h`), but from the bytes
 *     SQLite holds: only the payloads a thread has not met before are copied; or
 *   - the raw 7-tuple the sqlite3 module would have given (its conversions,
 *     the reader's text factory for text that is not UTF-8), for the Python
 *     path to judge: any row `_scan.row` would not accept, and every row after
 *     it in its thread (so payloads are numbered in row order, as in Python).
 *
 * It holds no transcript rule: no latest checkpoint, no ts, no versions, no
 * events. What it decides is byte-level: which rows share a thread id (equal
 * bytes of UTF-8 text; any other id is compared by Python's `==`, as
 * `itertools.groupby` does), whether a row repeats its predecessor's key (equal
 * bytes: such a row is handed over raw, the Python path reports it), and the
 * numbering of payloads by their bytes (`records.Payloads.versions`: the same
 * numbers, the same items).
 *
 * Errors come where the sqlite3 module raises them: that module fetches a row
 * and steps to the next before handing it over, so an error SQLite returns on
 * the step after row k is raised in place of row k. `Rows.reading` then names
 * the thread of row k-1 (the one the Python reader was reading), and the rows
 * of the unfinished threads are dropped, as Python drops them. The Python twin
 * is `loaders.sqlite.reader`'s groupby over a sqlite3 cursor; both give the same
 * bundles (tests/loaders/test_rows.py, fuzz target `rows`).
 */
#define PY_SSIZE_T_CLEAN
#define _GNU_SOURCE /* memmem */
#include <Python.h>
#include <sqlite3.h>
#include <stdint.h>
#include <string.h>

#include "_mpscan.h"

static PyObject *array_type, *s_i, *s_items, *s_index, *s_prev, *s_prev_versions, *s_blob, *s_spans;

/* --- Store: one read-only connection and what rows are made of --------------- */

typedef struct {
    PyObject_HEAD
    sqlite3 *db;
    PyObject *text;           /* the reader's text factory: bytes -> str (text that is not UTF-8) */
    PyObject *error;          /* (code, message) -> the exception sqlite3 would raise */
    PyObject *raw_checkpoint; /* records.RawCheckpoint */
    PyObject *payloads;       /* records.Payloads */
    PyObject *nothing;        /* `Rows.reading` before the first thread */
} Store;

static PyTypeObject StoreType, RowsType;

static void set_error(Store *st, int code, const char *message) {
    PyObject *exc = PyObject_CallFunction(st->error, "is", code, message);
    if (exc == NULL) return;
    PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
    Py_DECREF(exc);
}

static void db_error(Store *st) {
    if (st->db == NULL) {
        set_error(st, SQLITE_MISUSE, "Cannot operate on a closed database.");
        return;
    }
    set_error(st, sqlite3_extended_errcode(st->db), sqlite3_errmsg(st->db));
}

static int Store_init(Store *st, PyObject *args, PyObject *kwds) {
    const char *uri;
    PyObject *text, *error, *raw_checkpoint, *payloads, *nothing;
    static char *kwlist[] = {"uri", "text", "error", "raw_checkpoint", "payloads", "nothing", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "sOOOOO", kwlist, &uri, &text, &error, &raw_checkpoint, &payloads,
                                     &nothing))
        return -1;
    if (!PyType_Check(raw_checkpoint) || !PyType_IsSubtype((PyTypeObject *)raw_checkpoint, &PyTuple_Type)) {
        PyErr_SetString(PyExc_TypeError, "raw_checkpoint must be a tuple type");
        return -1;
    }
    Py_XSETREF(st->text, Py_NewRef(text));
    Py_XSETREF(st->error, Py_NewRef(error));
    Py_XSETREF(st->raw_checkpoint, Py_NewRef(raw_checkpoint));
    Py_XSETREF(st->payloads, Py_NewRef(payloads));
    Py_XSETREF(st->nothing, Py_NewRef(nothing));
    if (st->db != NULL) {
        sqlite3_close_v2(st->db);
        st->db = NULL;
    }
    sqlite3 *db = NULL;
    int rc = sqlite3_open_v2(uri, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL);
    if (rc != SQLITE_OK) {
        const char *msg = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
        set_error(st, db ? sqlite3_extended_errcode(db) : rc, msg);
        sqlite3_close_v2(db);
        return -1;
    }
    st->db = db;
    return 0;
}

static PyObject *Store_close(Store *st, PyObject *unused) {
    if (st->db != NULL) {
        sqlite3_close_v2(st->db); /* (statements still open finalize it later) */
        st->db = NULL;
    }
    Py_RETURN_NONE;
}

static void Store_dealloc(Store *st) {
    if (st->db != NULL) sqlite3_close_v2(st->db);
    Py_XDECREF(st->text);
    Py_XDECREF(st->error);
    Py_XDECREF(st->raw_checkpoint);
    Py_XDECREF(st->payloads);
    Py_XDECREF(st->nothing);
    Py_TYPE(st)->tp_free((PyObject *)st);
}

/* --- Rows: one query's rows, a thread at a time --------------------------------- */

typedef struct {
    PyObject_HEAD
    Store *store;
    sqlite3_stmt *stmt;   /* NULL once finished, failed or closed */
    int at_row;           /* stmt holds a row not processed yet (else SQLITE_DONE was met) */
    PyObject *reading;    /* the thread the Python reader would have been reading at the last error */
    Py_ssize_t cap;       /* the most rows of a thread gathered (`records.max_thread_checkpoints`) */
    Py_ssize_t max_elements; /* a blob of more msgpack values goes to Python (`loaders/elements.py`) */

    /* the thread being gathered */
    PyObject *key;        /* its id as Python sees it; NULL: none yet */
    int key_text;         /* the id is UTF-8 text, its bytes in key_bytes */
    char *key_bytes;
    Py_ssize_t key_len;
    PyObject *items;      /* RawCheckpoints, then raw rows */
    Py_ssize_t n_fast;    /* how many of items are RawCheckpoints */
    Py_ssize_t skipped;   /* rows of the thread past `cap`: counted, not read */
    int raw;              /* a row went raw: the rest of the thread does too */
    PyObject *payloads;   /* records.Payloads of the thread */
    PyObject *index;      /* payloads._index (dict) */
    PyObject *plist;      /* payloads.items (list) */
    PyObject *prev_arr;   /* the last numbered list (array('i')), or NULL */
    int32_t *prev;        /* its numbers */
    Py_ssize_t nprev, capprev;
    int32_t *cur;         /* scratch: the list being numbered */
    Py_ssize_t capcur;
    /* the previous row of the thread: its key columns when both were UTF-8 text */
    int prev_keys;
    PyObject *prev_ns, *prev_cid; /* str */
} Rows;

static void group_clear(Rows *r) {
    Py_CLEAR(r->key);
    Py_CLEAR(r->items);
    Py_CLEAR(r->payloads);
    Py_CLEAR(r->index);
    Py_CLEAR(r->plist);
    Py_CLEAR(r->prev_arr);
    Py_CLEAR(r->prev_ns);
    Py_CLEAR(r->prev_cid);
    r->key_text = 0;
    r->key_len = 0;
    r->n_fast = 0;
    r->skipped = 0;
    r->raw = 0;
    r->nprev = 0;
    r->prev_keys = 0;
}

static void rows_finish(Rows *r) {
    if (r->stmt != NULL) {
        sqlite3_finalize(r->stmt);
        r->stmt = NULL;
    }
    r->at_row = 0;
}

static void Rows_dealloc(Rows *r) {
    rows_finish(r);
    group_clear(r);
    PyMem_Free(r->key_bytes);
    PyMem_Free(r->prev);
    PyMem_Free(r->cur);
    Py_XDECREF(r->reading);
    Py_XDECREF(r->store);
    Py_TYPE(r)->tp_free((PyObject *)r);
}

/* Strict UTF-8 text of column i (NULL: not TEXT, or not UTF-8). */
static const unsigned char *text_col(sqlite3_stmt *s, int i, Py_ssize_t *len) {
    if (sqlite3_column_type(s, i) != SQLITE_TEXT) return NULL;
    const unsigned char *p = sqlite3_column_text(s, i);
    Py_ssize_t n = sqlite3_column_bytes(s, i);
    if (p == NULL) {
        if (n > 0) return NULL; /* out of memory: the raw path raises it */
        p = (const unsigned char *)"";
    }
    if (!utf8_ok(p, n)) return NULL;
    *len = n;
    return p;
}

/* Column i as the sqlite3 module converts it (text by the reader's text factory when not UTF-8). */
static PyObject *value(Rows *r, int i) {
    sqlite3_stmt *s = r->stmt;
    switch (sqlite3_column_type(s, i)) {
    case SQLITE_NULL:
        Py_RETURN_NONE;
    case SQLITE_INTEGER:
        return PyLong_FromLongLong(sqlite3_column_int64(s, i));
    case SQLITE_FLOAT:
        return PyFloat_FromDouble(sqlite3_column_double(s, i));
    case SQLITE_TEXT: {
        const char *p = (const char *)sqlite3_column_text(s, i);
        Py_ssize_t n = sqlite3_column_bytes(s, i);
        if (p == NULL && n > 0) return PyErr_NoMemory();
        if (p == NULL) p = "";
        if (utf8_ok((const unsigned char *)p, n)) return PyUnicode_DecodeUTF8(p, n, "strict");
        PyObject *raw = PyBytes_FromStringAndSize(p, n);
        if (raw == NULL) return NULL;
        PyObject *out = PyObject_CallOneArg(r->store->text, raw);
        Py_DECREF(raw);
        return out;
    }
    default: {
        const char *p = sqlite3_column_blob(s, i);
        Py_ssize_t n = sqlite3_column_bytes(s, i);
        if (p == NULL && n > 0) return PyErr_NoMemory();
        return PyBytes_FromStringAndSize(p ? p : "", n);
    }
    }
}

/* The row as the sqlite3 module gives it: a 7-tuple. */
static PyObject *raw_row(Rows *r) {
    PyObject *row = PyTuple_New(7);
    if (row == NULL) return NULL;
    /* (an id that is not text is the row's own: 1 and 1.0 are one thread, shown apart) */
    PyTuple_SET_ITEM(row, 0, r->key_text ? Py_NewRef(r->key) : NULL);
    for (int i = r->key_text ? 1 : 0; i < 7; i++) {
        PyObject *v = value(r, i);
        if (v == NULL) {
            Py_DECREF(row);
            return NULL;
        }
        PyTuple_SET_ITEM(row, i, v);
    }
    return row;
}

static int reserve_i32(int32_t **p, Py_ssize_t *cap, Py_ssize_t n) {
    if (n <= *cap) return 0;
    Py_ssize_t c = *cap ? *cap : 256;
    while (c < n) c *= 2;
    int32_t *q = PyMem_Realloc(*p, sizeof(int32_t) * (size_t)c);
    if (q == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    *p = q;
    *cap = c;
    return 0;
}

/* Number the payloads at `spans` as `Payloads.versions` does: the leading ones equal (by
 * bytes) to the previous list's are its numbers, the rest are looked up by value in the
 * thread's table or added to it. Returns the new array('i'), or NULL with an exception. */
static PyObject *number(Rows *r, const unsigned char *blob, const Found *f) {
    Py_ssize_t n = f->n_messages, common = 0;
    if (reserve_i32(&r->cur, &r->capcur, n) < 0) return NULL;
    Py_ssize_t limit = r->nprev < n ? r->nprev : n;
    while (common < limit) {
        PyObject *item = PyList_GET_ITEM(r->plist, r->prev[common]);
        if (!PyBytes_CheckExact(item) || PyBytes_GET_SIZE(item) != f->spans[common].len ||
            memcmp(PyBytes_AS_STRING(item), blob + f->spans[common].off, (size_t)f->spans[common].len) != 0)
            break;
        r->cur[common] = r->prev[common];
        common++;
    }
    for (Py_ssize_t i = common; i < n; i++) {
        PyObject *payload = PyBytes_FromStringAndSize((const char *)blob + f->spans[i].off, f->spans[i].len);
        if (payload == NULL) return NULL;
        PyObject *v = PyDict_GetItemWithError(r->index, payload); /* borrowed */
        long num;
        if (v != NULL) {
            num = PyLong_AsLong(v);
            if (num == -1 && PyErr_Occurred()) {
                Py_DECREF(payload);
                return NULL;
            }
        } else if (PyErr_Occurred()) {
            Py_DECREF(payload);
            return NULL;
        } else {
            Py_ssize_t size = PyList_GET_SIZE(r->plist);
            if (size >= INT32_MAX) {
                Py_DECREF(payload);
                PyErr_SetString(PyExc_OverflowError, "too many distinct messages in one thread");
                return NULL;
            }
            num = (long)size;
            PyObject *k = PyLong_FromLong(num);
            if (k == NULL || PyDict_SetItem(r->index, payload, k) < 0 || PyList_Append(r->plist, payload) < 0) {
                Py_XDECREF(k);
                Py_DECREF(payload);
                return NULL;
            }
            Py_DECREF(k);
        }
        Py_DECREF(payload);
        r->cur[i] = (int32_t)num;
    }
    PyObject *data = PyBytes_FromStringAndSize((const char *)r->cur, (Py_ssize_t)sizeof(int32_t) * n);
    if (data == NULL) return NULL;
    PyObject *arr = PyObject_CallFunctionObjArgs(array_type, s_i, data, NULL);
    Py_DECREF(data);
    if (arr == NULL) return NULL;
    /* this list is the next one's previous */
    if (reserve_i32(&r->prev, &r->capprev, n) < 0) {
        Py_DECREF(arr);
        return NULL;
    }
    memcpy(r->prev, r->cur, sizeof(int32_t) * (size_t)n);
    r->nprev = n;
    Py_XSETREF(r->prev_arr, Py_NewRef(arr));
    return arr;
}

/* Text of a key column as a str, reusing `same` when its bytes are equal (a namespace
 * repeats, a parent is the row before). */
static PyObject *key_str(const unsigned char *p, Py_ssize_t n, PyObject *same) {
    if (same != NULL) {
        Py_ssize_t len;
        const char *q = PyUnicode_AsUTF8AndSize(same, &len);
        if (q != NULL && len == n && memcmp(p, q, (size_t)n) == 0) return Py_NewRef(same);
        PyErr_Clear();
    }
    return PyUnicode_DecodeUTF8((const char *)p, n, "strict");
}

/* The row as `_scan.row` would make it: 1 and *out = the RawCheckpoint; 0: not sure (the raw
 * row goes to the Python path); -1: an error. */
static int fast_row(Rows *r, PyObject **out) {
    sqlite3_stmt *s = r->stmt;
    Py_ssize_t ns_len, cid_len, par_len = 0, type_len, md_len, blob_len;
    const unsigned char *ns = text_col(s, 1, &ns_len), *cid = text_col(s, 2, &cid_len), *par = NULL;
    if (ns == NULL || cid == NULL) return 0;
    int par_null = sqlite3_column_type(s, 3) == SQLITE_NULL;
    if (!par_null && (par = text_col(s, 3, &par_len)) == NULL) return 0;
    const unsigned char *type = text_col(s, 4, &type_len);
    if (type == NULL || type_len != 7 || memcmp(type, "msgpack", 7) != 0) return 0;
    if (sqlite3_column_type(s, 5) != SQLITE_BLOB) return 0;
    int mt = sqlite3_column_type(s, 6);
    const unsigned char *md;
    if (mt == SQLITE_TEXT) {
        md = text_col(s, 6, &md_len);
    } else if (mt == SQLITE_BLOB) {
        md = sqlite3_column_blob(s, 6);
        md_len = sqlite3_column_bytes(s, 6);
        if (md != NULL && !utf8_ok(md, md_len)) md = NULL;
    } else {
        return 0;
    }
    if (md == NULL || md_len == 0 || md[0] != '{' || memmem(md, (size_t)md_len, "NaN", 3) ||
        memmem(md, (size_t)md_len, "Infinity", 8))
        return 0;
    /* A key repeated from the row before (a table without its primary key): Python reports it. */
    if (r->prev_keys) {
        Py_ssize_t a, b;
        const char *pn = PyUnicode_AsUTF8AndSize(r->prev_ns, &a), *pc = PyUnicode_AsUTF8AndSize(r->prev_cid, &b);
        if (pn == NULL || pc == NULL) return -1;
        if (a == ns_len && b == cid_len && memcmp(pn, ns, (size_t)a) == 0 && memcmp(pc, cid, (size_t)b) == 0) return 0;
    }
    const unsigned char *blob = sqlite3_column_blob(s, 5);
    blob_len = sqlite3_column_bytes(s, 5);
    if (blob == NULL) return 0; /* empty, or out of memory: the raw path says which */

    Found f = {0};
    int sc = scan_checkpoint(blob, blob_len, r->max_elements, &f);
    if (sc == -2) {
        PyMem_Free(f.spans);
        PyErr_NoMemory();
        return -1;
    }
    if (sc < 0) {
        PyMem_Free(f.spans);
        return 0;
    }
    PyObject *fields[8] = {NULL};
    int ok = -1;
    fields[0] = Py_NewRef(r->key);
    fields[1] = key_str(ns, ns_len, r->prev_ns);
    fields[2] = fields[1] ? key_str(cid, cid_len, NULL) : NULL;
    if (fields[2] == NULL) goto done;
    fields[3] = par_null ? Py_NewRef(Py_None) : key_str(par, par_len, r->prev_cid);
    fields[4] = fields[3] ? PyUnicode_DecodeUTF8((const char *)f.ts, f.ts_len, "strict") : NULL;
    fields[5] = fields[4] ? (f.has_messages ? number(r, blob, &f) : Py_NewRef(Py_None)) : NULL;
    fields[6] = Py_NewRef(Py_False);
    fields[7] = fields[5] ? PyUnicode_DecodeUTF8((const char *)md, md_len, "strict") : NULL;
    if (fields[7] == NULL) goto done;
    PyTypeObject *tp = (PyTypeObject *)r->store->raw_checkpoint;
    PyObject *cp = tp->tp_alloc(tp, 8);
    if (cp == NULL) goto done;
    for (int i = 0; i < 8; i++) {
        PyTuple_SET_ITEM(cp, i, fields[i]);
        fields[i] = NULL;
    }
    Py_XSETREF(r->prev_ns, Py_NewRef(PyTuple_GET_ITEM(cp, 1)));
    Py_XSETREF(r->prev_cid, Py_NewRef(PyTuple_GET_ITEM(cp, 2)));
    r->prev_keys = 1;
    *out = cp;
    ok = 1;
done:
    for (int i = 0; i < 8; i++) Py_XDECREF(fields[i]);
    PyMem_Free(f.spans);
    return ok;
}

/* Start gathering the thread of the current row (`key`: its id object, stolen). */
static int group_start(Rows *r, PyObject *key, const unsigned char *bytes, Py_ssize_t len) {
    group_clear(r);
    r->key = key;
    if (bytes != NULL) {
        char *p = PyMem_Realloc(r->key_bytes, (size_t)(len ? len : 1));
        if (p == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        memcpy(p, bytes, (size_t)len);
        r->key_bytes = p;
        r->key_len = len;
        r->key_text = 1;
    } else {
        r->raw = 1; /* an id that is not UTF-8 text: the Python path reports each row */
    }
    r->items = PyList_New(0);
    r->payloads = r->items ? PyObject_CallNoArgs(r->store->payloads) : NULL;
    if (r->payloads == NULL) return -1;
    r->index = PyObject_GetAttr(r->payloads, s_index);
    r->plist = r->index ? PyObject_GetAttr(r->payloads, s_items) : NULL;
    if (r->plist == NULL) return -1;
    if (!PyDict_CheckExact(r->index) || !PyList_CheckExact(r->plist)) {
        PyErr_SetString(PyExc_TypeError, "Payloads state is not a dict and a list");
        return -1;
    }
    return 0;
}

/* The gathered thread as (id, rows, payloads, fast, skipped), with `payloads` left as
 * `Payloads.versions` would have left it after the last RawCheckpoint. */
static PyObject *group_take(Rows *r) {
    if (r->prev_arr != NULL) {
        PyObject *fresh = PyList_New(0);
        if (fresh == NULL || PyObject_SetAttr(r->payloads, s_prev, fresh) < 0 ||
            PyObject_SetAttr(r->payloads, s_prev_versions, r->prev_arr) < 0 ||
            PyObject_SetAttr(r->payloads, s_blob, Py_None) < 0 || PyObject_SetAttr(r->payloads, s_spans, Py_None) < 0) {
            Py_XDECREF(fresh);
            return NULL;
        }
        Py_DECREF(fresh);
    }
    PyObject *out = Py_BuildValue("(OOOnn)", r->key, r->items, r->payloads, r->n_fast, r->skipped);
    if (out != NULL) group_clear(r);
    return out;
}

/* The current row's thread id: 1 when it is the gathered thread's, 0 when another
 * (*key set to its id object, *bytes to its text when UTF-8), -1 on error. */
static int same_thread(Rows *r, PyObject **key, const unsigned char **bytes, Py_ssize_t *len) {
    *key = NULL;
    *bytes = text_col(r->stmt, 0, len);
    if (*bytes != NULL) {
        if (r->key != NULL && r->key_text && r->key_len == *len && memcmp(r->key_bytes, *bytes, (size_t)*len) == 0)
            return 1;
        *key = PyUnicode_DecodeUTF8((const char *)*bytes, *len, "strict");
        return *key == NULL ? -1 : 0;
    }
    *key = value(r, 0);
    if (*key == NULL) return -1;
    if (r->key != NULL && !r->key_text) {
        int eq = PyObject_RichCompareBool(r->key, *key, Py_EQ); /* as itertools.groupby compares */
        if (eq < 0) {
            Py_CLEAR(*key);
            return -1;
        }
        if (eq) {
            Py_CLEAR(*key);
            return 1;
        }
    }
    return 0;
}

/* One row: gathered into its thread; *done = the thread it ended, if it began another. */
static int one_row(Rows *r, PyObject **done) {
    PyObject *key, *item = NULL;
    const unsigned char *bytes;
    Py_ssize_t len;
    int same = same_thread(r, &key, &bytes, &len);
    if (same < 0) return -1;
    if (!same) {
        if (r->key != NULL && (*done = group_take(r)) == NULL) {
            Py_DECREF(key);
            return -1;
        }
        if (group_start(r, key, bytes, len) < 0) return -1; /* (key is the group's now) */
    } else if (PyList_GET_SIZE(r->items) >= r->cap) {
        r->skipped++; /* (past the thread's limit: neither read nor scanned) */
        return 0;
    }
    int fast = r->raw ? 0 : fast_row(r, &item);
    if (fast < 0) return -1;
    if (!fast) {
        r->raw = 1;
        if ((item = raw_row(r)) == NULL) return -1;
    }
    int appended = PyList_Append(r->items, item);
    Py_DECREF(item);
    if (appended < 0) return -1;
    r->n_fast += fast;
    return 0;
}

static PyObject *Rows_next(Rows *r) {
    for (;;) {
        if (r->stmt == NULL || !r->at_row) {
            rows_finish(r);
            return r->key != NULL ? group_take(r) : NULL; /* (NULL and no error: the end) */
        }
        if (r->store->db == NULL) {
            db_error(r->store);
            break;
        }
        /* Row k. An error on the step after it is charged to the thread of row k-1. */
        PyObject *before = Py_NewRef(r->key != NULL ? r->key : r->store->nothing), *done = NULL;
        int ok = one_row(r, &done) == 0;
        if (ok) {
            int rc = sqlite3_step(r->stmt);
            if (rc == SQLITE_DONE) {
                r->at_row = 0;
            } else if (rc != SQLITE_ROW) {
                Py_SETREF(r->reading, Py_NewRef(before));
                db_error(r->store);
                ok = 0;
            }
        }
        Py_DECREF(before);
        if (!ok) {
            Py_XDECREF(done);
            break;
        }
        if (done != NULL) return done;
    }
    rows_finish(r);
    group_clear(r);
    return NULL;
}

static PyObject *Rows_close(Rows *r, PyObject *unused) {
    rows_finish(r);
    group_clear(r);
    Py_RETURN_NONE;
}

static PyObject *Rows_get_reading(Rows *r, void *closure) { return Py_NewRef(r->reading); }

static PyGetSetDef Rows_getset[] = {
    {"reading", (getter)Rows_get_reading, NULL,
     "The raw id of the thread the Python reader would have been reading when the last error was raised.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef Rows_methods[] = {
    {"close", (PyCFunction)Rows_close, METH_NOARGS, "Finalize the statement; the iterator ends."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject RowsType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "loaders._rows.Rows",
    .tp_basicsize = sizeof(Rows),
    .tp_dealloc = (destructor)Rows_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "One query's checkpoint rows, a thread at a time: (id, rows, payloads, fast, skipped) (see _rows.c).",
    .tp_iter = PyObject_SelfIter,
    .tp_iternext = (iternextfunc)Rows_next,
    .tp_methods = Rows_methods,
    .tp_getset = Rows_getset,
};

static int bind(Store *st, sqlite3_stmt *stmt, PyObject *params) {
    Py_ssize_t n = PyList_GET_SIZE(params);
    if (n != sqlite3_bind_parameter_count(stmt)) {
        PyErr_Format(PyExc_ValueError, "the query takes %d parameters, %zd given", sqlite3_bind_parameter_count(stmt), n);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *v = PyList_GET_ITEM(params, i);
        int rc;
        if (v == Py_None) {
            rc = sqlite3_bind_null(stmt, (int)i + 1);
        } else if (PyLong_CheckExact(v)) {
            long long x = PyLong_AsLongLong(v);
            if (x == -1 && PyErr_Occurred()) return -1;
            rc = sqlite3_bind_int64(stmt, (int)i + 1, x);
        } else if (PyUnicode_CheckExact(v)) {
            Py_ssize_t len;
            const char *p = PyUnicode_AsUTF8AndSize(v, &len);
            if (p == NULL) return -1;
            rc = sqlite3_bind_text64(stmt, (int)i + 1, p, (sqlite3_uint64)len, SQLITE_TRANSIENT, SQLITE_UTF8);
        } else if (PyBytes_CheckExact(v)) {
            rc = sqlite3_bind_blob64(stmt, (int)i + 1, PyBytes_AS_STRING(v), (sqlite3_uint64)PyBytes_GET_SIZE(v),
                                     SQLITE_TRANSIENT);
        } else {
            PyErr_Format(PyExc_TypeError, "a %.50s query parameter", Py_TYPE(v)->tp_name);
            return -1;
        }
        if (rc != SQLITE_OK) {
            db_error(st);
            return -1;
        }
    }
    return 0;
}

PyDoc_STRVAR(rows_doc,
"rows(sql, params, cap, max_elements) -> Rows\n\n"
"Run the checkpoints query (columns thread_id, ns, id, parent, type, blob, metadata; rows\n"
"grouped by thread) and step to its first row, raising there as sqlite3's execute() would.\n"
"params: a list of str, bytes, int or None. A thread's rows past the first `cap` (> 0) are\n"
"counted, not read: each thread comes as (id, rows, payloads, fast, skipped). A blob of more\n"
"than `max_elements` msgpack values is handed over raw (`loaders/elements.py`).");

static PyObject *Store_rows(Store *st, PyObject *args) {
    const char *sql;
    PyObject *params;
    Py_ssize_t cap, max_elements;
    if (!PyArg_ParseTuple(args, "sO!nn", &sql, &PyList_Type, &params, &cap, &max_elements)) return NULL;
    if (cap < 1) {
        PyErr_SetString(PyExc_ValueError, "cap must be positive");
        return NULL;
    }
    if (st->db == NULL) {
        db_error(st);
        return NULL;
    }
    sqlite3_stmt *stmt = NULL;
    if (sqlite3_prepare_v2(st->db, sql, -1, &stmt, NULL) != SQLITE_OK) {
        db_error(st);
        sqlite3_finalize(stmt);
        return NULL;
    }
    if (sqlite3_column_count(stmt) != 7) {
        sqlite3_finalize(stmt);
        PyErr_SetString(PyExc_ValueError, "the checkpoints query must give 7 columns");
        return NULL;
    }
    if (bind(st, stmt, params) < 0) {
        sqlite3_finalize(stmt);
        return NULL;
    }
    int rc = sqlite3_step(stmt);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
        db_error(st);
        sqlite3_finalize(stmt);
        return NULL;
    }
    Rows *r = PyObject_New(Rows, &RowsType);
    if (r == NULL) {
        sqlite3_finalize(stmt);
        return NULL;
    }
    /* (PyObject_New leaves the fields unset) */
    memset((char *)r + sizeof(PyObject), 0, sizeof(Rows) - sizeof(PyObject));
    r->store = (Store *)Py_NewRef(st);
    r->stmt = stmt;
    r->at_row = rc == SQLITE_ROW;
    r->reading = Py_NewRef(st->nothing);
    r->cap = cap;
    r->max_elements = max_elements;
    return (PyObject *)r;
}

static PyMethodDef Store_methods[] = {
    {"rows", (PyCFunction)Store_rows, METH_VARARGS, rows_doc},
    {"close", (PyCFunction)Store_close, METH_NOARGS, "Close the connection (rows still open end with an error)."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject StoreType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "loaders._rows.Store",
    .tp_basicsize = sizeof(Store),
    .tp_dealloc = (destructor)Store_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Store(uri, text, error, raw_checkpoint, payloads, nothing): a read-only connection (see _rows.c).",
    .tp_methods = Store_methods,
    .tp_init = (initproc)Store_init,
    .tp_new = PyType_GenericNew,
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "loaders._rows",
    "The SQLite reader's checkpoint rows stepped and scanned in SQLite's buffers (see _rows.c).", -1, NULL, NULL, NULL,
    NULL, NULL,
};

PyMODINIT_FUNC PyInit__rows(void) {
    PyObject *array_mod = PyImport_ImportModule("array");
    if (array_mod == NULL) return NULL;
    array_type = PyObject_GetAttrString(array_mod, "array");
    Py_DECREF(array_mod);
    s_i = PyUnicode_InternFromString("i");
    s_items = PyUnicode_InternFromString("items");
    s_index = PyUnicode_InternFromString("_index");
    s_prev = PyUnicode_InternFromString("_prev");
    s_prev_versions = PyUnicode_InternFromString("_prev_versions");
    s_blob = PyUnicode_InternFromString("blob");
    s_spans = PyUnicode_InternFromString("spans");
    if (!array_type || !s_i || !s_items || !s_index || !s_prev || !s_prev_versions || !s_blob || !s_spans) return NULL;
    if (PyType_Ready(&StoreType) < 0 || PyType_Ready(&RowsType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    if (PyModule_AddObjectRef(m, "Store", (PyObject *)&StoreType) < 0 ||
        PyModule_AddObjectRef(m, "Rows", (PyObject *)&RowsType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
