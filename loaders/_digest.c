/* Transcript Lens: whole threads of a SqliteSaver store, digested in C.
 *
 * The SQLite loader's common case without a Python object per checkpoint. A
 * `Digester` runs the reader's checkpoints query itself (SQLite's C API, the
 * same library and read-ahead VFS as Python's sqlite3 module) and, one thread
 * at a time:
 *
 *   next()   reads the thread's rows, checks them as `_scan.row` does, walks
 *            each blob in place (`_mpscan.h`), numbers the message payloads
 *            (common prefix with the previous list by memcmp, the rest looked
 *            up in a dict of bytes, like `records.Payloads`), then does the
 *            per-checkpoint half of `transform.transform_thread`: versions
 *            renumbered by first appearance in (ts, id) order, first sightings,
 *            the tree (leaves, latest per namespace, the current branch, where
 *            each other branch hangs), and hands back the distinct payloads
 *            for Python to decode;
 *   finish() given what decoding found (message identities, edit signatures,
 *            ids) and the thread's interrupts, derives the history events
 *            (appends along chains, `_diff` otherwise) and appends the
 *            thread's `checkpoints` and `message_events` rows to Arrow column
 *            builders, which `take()` hands over as buffers.
 *
 * It never decides anything the Python path would decide differently: a
 * thread with any row not in the exact common shape (a key that is not UTF-8
 * text, a type tag other than msgpack, metadata that is not JSON-object text,
 * a blob the scanner is not sure of, a ts not in LangGraph's UTC form, rows out
 * of key order) is skipped and reported as a fallback, and the Python path
 * reads it again and reports what is wrong. A thread id that is not UTF-8 text
 * stops the digester; the Python path reads the rest. Equality with the
 * Python path is tested on real stores, generated thread shapes and damaged
 * copies (tests/loaders/test_digest.py).
 */
#define PY_SSIZE_T_CLEAN
#define _GNU_SOURCE /* memmem */
#include <Python.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "_mpscan.h"

/* A thread whose key and metadata text would not fit comfortably in one Arrow
 * batch (int32 offsets) goes to the Python path. */
#define MAX_THREAD_TEXT (256 * 1024 * 1024)

#include "_columns.h"

/* Column order of the staged tables (loaders/schema.sql); step, source and
 * run_id (all NULL, derived by DuckDB at ingest) are added by the caller. */
enum { K_TID, K_NS, K_CID, K_PARENT, K_TS, K_MCOUNT, K_VERSIONS, K_ROOT, K_LATEST, K_LEAF, K_CURRENT, K_BRANCH, K_INTERRUPT, K_META, K_NCOLS };
static const int ck_kinds[K_NCOLS] = {C_STR, C_STR, C_STR, C_STR, C_I64, C_I32, C_LIST, C_BOOL, C_BOOL, C_BOOL, C_BOOL, C_STR, C_BOOL, C_STR};
enum { E_TID, E_CID, E_PARENT, E_TS, E_EVENT, E_MID, E_POS, E_VER, E_PREV, E_NCOLS };
static const int ev_kinds[E_NCOLS] = {C_STR, C_STR, C_STR, C_I64, C_STR, C_STR, C_I32, C_I32, C_I32};
/* messages and message_versions, as transform.transcript_rows / versions_rows build them. */
#define M_NCOLS 27
static const char m_kinds[M_NCOLS + 1] = "ssssisssssiisls" "siss" "lllssssi";
#define V_NCOLS 15
static const char v_kinds[V_NCOLS + 1] = "sisssssiisisssl";

static int col_kind(char k) { return k == 's' ? C_STR : k == 'i' ? C_I32 : k == 'l' ? C_I64 : k == 'b' ? C_BOOL : C_LIST; }

/* Fields of a decode.Message tuple. */
enum { MSG_ID, MSG_LC_TYPE, MSG_ROLE, MSG_CHAT_ROLE, MSG_NAME, MSG_CONTENT, MSG_NON_TEXT, MSG_TOOL_CALLS, MSG_TOOL_COUNT,
       MSG_TOOL_NAMES, MSG_TOOL_CALL_ID, MSG_TOOL_STATUS, MSG_INPUT, MSG_OUTPUT, MSG_TOTAL, MSG_MODEL, MSG_USAGE, MSG_RESPONSE,
       MSG_ADDITIONAL, MSG_NFIELDS };

/* --- one thread ------------------------------------------------------------ */

typedef struct {
    Py_ssize_t ns_off, cid_off, par_off, md_off, ver_off; /* into arena / versions */
    Py_ssize_t ns_len, cid_len, par_len, md_len;           /* par_len -1: NULL parent */
    Py_ssize_t ver_len;                                     /* -1: no messages channel */
    int64_t ts;
} Cp;

typedef struct {
    PyObject_HEAD
    sqlite3 *db;
    sqlite3_stmt *stmt;
    int have_row, done;
    PyObject *wanted;     /* a set of thread ids, or NULL */
    PyObject *error;      /* the exception raised for SQLite errors */

    /* the thread being read */
    Buf tid, arena;
    Cp *cps;
    Py_ssize_t ncps, capcps;
    int32_t *vers;        /* payload version numbers of every checkpoint, reader numbering */
    Py_ssize_t nvers, capvers;
    Py_ssize_t prev_off, prev_len; /* the previous list that had messages (-1: none yet) */
    PyObject *items;      /* list: distinct payloads (bytes), reader numbering */
    PyObject *index;      /* dict: payload -> number */
    int bad;              /* a row not in the common shape: the Python path reads this thread */

    /* after next(): the transform's per-checkpoint state, until finish() */
    int ready;
    Py_ssize_t nroots, nitems, nnew; /* nnew: versions handed over (renumbered) */
    int32_t *rvers;       /* root lists renumbered; rv_off/rv_len per root */
    Py_ssize_t *rv_off, *rv_len;
    int32_t *grp_end;     /* per row: end of its namespace's rows */
    int32_t *children;    /* per row: checkpoints naming it as parent */
    int32_t *parent_root; /* per root: its parent's root index, -1 none or unknown */
    unsigned char *current;
    int32_t *hang;        /* per root off the current branch: the current node it hangs from, -1 none */
    int32_t *first_cp;    /* per version handed over: the row of its first sighting */

    Col ck[K_NCOLS];
    Col ev[E_NCOLS];
    Col mc[M_NCOLS];
    Col vc[V_NCOLS];
} Digester;

static void thread_free(Digester *d) {
    PyMem_Free(d->rvers);
    PyMem_Free(d->rv_off);
    PyMem_Free(d->rv_len);
    PyMem_Free(d->grp_end);
    PyMem_Free(d->children);
    PyMem_Free(d->parent_root);
    PyMem_Free(d->current);
    PyMem_Free(d->hang);
    PyMem_Free(d->first_cp);
    d->first_cp = NULL;
    d->rvers = NULL;
    d->rv_off = d->rv_len = NULL;
    d->grp_end = d->children = d->parent_root = d->hang = NULL;
    d->current = NULL;
    d->ready = 0;
}

static int thread_reset(Digester *d) {
    thread_free(d);
    d->tid.len = d->arena.len = 0;
    d->ncps = d->nvers = 0;
    d->prev_off = d->prev_len = -1;
    d->bad = 0;
    Py_CLEAR(d->items);
    Py_CLEAR(d->index);
    d->items = PyList_New(0);
    d->index = PyDict_New();
    return (d->items && d->index) ? 0 : -1;
}

static int db_error(Digester *d) {
    int code = sqlite3_errcode(d->db);
    if (code == SQLITE_NOMEM) {
        PyErr_NoMemory();
    } else {
        PyErr_SetString(d->error, sqlite3_errmsg(d->db));
    }
    return -1;
}

/* Strict UTF-8 text of column i, or NULL (not TEXT, or not UTF-8). */
static const char *text_col(sqlite3_stmt *s, int i, Py_ssize_t *len) {
    if (sqlite3_column_type(s, i) != SQLITE_TEXT) return NULL;
    const unsigned char *p = sqlite3_column_text(s, i);
    Py_ssize_t n = sqlite3_column_bytes(s, i);
    if (p == NULL) p = (const unsigned char *)"";
    if (!utf8_ok(p, n)) return NULL;
    *len = n;
    return (const char *)p;
}

static int cmp_bytes(const char *a, Py_ssize_t al, const char *b, Py_ssize_t bl) {
    int r = memcmp(a, b, (size_t)(al < bl ? al : bl));
    if (r) return r;
    return al < bl ? -1 : al > bl;
}

static int add_versions(Digester *d, Py_ssize_t n) {
    if (d->nvers + n > d->capvers) {
        Py_ssize_t cap = d->capvers ? d->capvers : 1024;
        while (cap < d->nvers + n) cap *= 2;
        int32_t *p = PyMem_Realloc(d->vers, sizeof(int32_t) * (size_t)cap);
        if (p == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        d->vers = p;
        d->capvers = cap;
    }
    return 0;
}

/* Number one list of payloads (spans into blob) as `records.Payloads.versions` does. */
static int number(Digester *d, const unsigned char *blob, const Found *f, Cp *cp) {
    Py_ssize_t n = f->n_messages;
    if (add_versions(d, n) < 0) return -1;
    Py_ssize_t common = 0;
    if (d->prev_len > 0) {
        Py_ssize_t limit = d->prev_len < n ? d->prev_len : n;
        const int32_t *prev = d->vers + d->prev_off;
        while (common < limit) {
            PyObject *item = PyList_GET_ITEM(d->items, prev[common]);
            if (PyBytes_GET_SIZE(item) != f->spans[common].len ||
                memcmp(PyBytes_AS_STRING(item), blob + f->spans[common].off, (size_t)f->spans[common].len) != 0)
                break;
            common++;
        }
        memcpy(d->vers + d->nvers, prev, sizeof(int32_t) * (size_t)common);
    }
    for (Py_ssize_t i = common; i < n; i++) {
        PyObject *payload = PyBytes_FromStringAndSize((const char *)blob + f->spans[i].off, f->spans[i].len);
        if (payload == NULL) return -1;
        PyObject *v = PyDict_GetItemWithError(d->index, payload); /* borrowed */
        long num;
        if (v != NULL) {
            num = PyLong_AsLong(v);
        } else if (PyErr_Occurred()) {
            Py_DECREF(payload);
            return -1;
        } else {
            num = (long)PyList_GET_SIZE(d->items);
            if (num >= INT32_MAX) {
                Py_DECREF(payload);
                PyErr_SetString(PyExc_OverflowError, "too many distinct messages in one thread");
                return -1;
            }
            PyObject *k = PyLong_FromLong(num);
            if (k == NULL || PyDict_SetItem(d->index, payload, k) < 0 || PyList_Append(d->items, payload) < 0) {
                Py_XDECREF(k);
                Py_DECREF(payload);
                return -1;
            }
            Py_DECREF(k);
        }
        Py_DECREF(payload);
        d->vers[d->nvers + i] = (int32_t)num;
    }
    cp->ver_off = d->nvers;
    cp->ver_len = n;
    d->prev_off = d->nvers;
    d->prev_len = n;
    d->nvers += n;
    return 0;
}

/* One `checkpoints` row of the current thread: 0 kept (or marked bad), -1 error. */
static int read_row(Digester *d) {
    sqlite3_stmt *s = d->stmt;
    Py_ssize_t ns_len, cid_len, par_len = -1, type_len, md_len;
    const char *ns = text_col(s, 1, &ns_len), *cid = text_col(s, 2, &cid_len), *par = NULL;
    if (ns == NULL || cid == NULL) goto bad;
    if (sqlite3_column_type(s, 3) != SQLITE_NULL && (par = text_col(s, 3, &par_len)) == NULL) goto bad;
    const char *type = text_col(s, 4, &type_len);
    if (type == NULL || type_len != 7 || memcmp(type, "msgpack", 7) != 0) goto bad;
    if (sqlite3_column_type(s, 5) != SQLITE_BLOB) goto bad;
    int mt = sqlite3_column_type(s, 6);
    if (mt != SQLITE_BLOB && mt != SQLITE_TEXT) goto bad;
    /* (type checks first: asking for the bytes of a value may convert it) */
    const unsigned char *blob = sqlite3_column_blob(s, 5);
    Py_ssize_t blob_len = sqlite3_column_bytes(s, 5);
    const char *md = mt == SQLITE_BLOB ? sqlite3_column_blob(s, 6) : (const char *)sqlite3_column_text(s, 6);
    md_len = sqlite3_column_bytes(s, 6);
    if (blob == NULL || md == NULL || md_len == 0 || md[0] != '{' || !utf8_ok((const unsigned char *)md, md_len) ||
        memmem(md, (size_t)md_len, "NaN", 3) || memmem(md, (size_t)md_len, "Infinity", 8))
        goto bad;
    if (d->ncps > 0) {
        const Cp *last = &d->cps[d->ncps - 1];
        int c = cmp_bytes(d->arena.p + last->ns_off, last->ns_len, ns, ns_len);
        if (c == 0) c = cmp_bytes(d->arena.p + last->cid_off, last->cid_len, cid, cid_len);
        if (c >= 0) goto bad; /* not in key order: the Python path sorts it out */
    }
    if (d->arena.len + ns_len + cid_len + (par_len > 0 ? par_len : 0) + md_len > MAX_THREAD_TEXT) goto bad;

    Found f = {0};
    int r = scan_checkpoint(blob, blob_len, &f);
    if (r == -2) {
        PyErr_NoMemory();
        return -1;
    }
    int64_t ts;
    if (r < 0 || !utc_iso_micros(f.ts, f.ts_len, &ts)) {
        PyMem_Free(f.spans);
        goto bad;
    }
    if (d->ncps == d->capcps) {
        Py_ssize_t cap = d->capcps ? d->capcps * 2 : 64;
        Cp *p = PyMem_Realloc(d->cps, sizeof(Cp) * (size_t)cap);
        if (p == NULL) {
            PyMem_Free(f.spans);
            PyErr_NoMemory();
            return -1;
        }
        d->cps = p;
        d->capcps = cap;
    }
    Cp *cp = &d->cps[d->ncps];
    cp->ts = ts;
    cp->ver_off = 0;
    cp->ver_len = -1;
    if (f.has_messages && number(d, blob, &f, cp) < 0) {
        PyMem_Free(f.spans);
        return -1;
    }
    PyMem_Free(f.spans);
    cp->ns_off = d->arena.len;
    cp->ns_len = ns_len;
    if (buf_put(&d->arena, ns, ns_len) < 0) return -1;
    cp->cid_off = d->arena.len;
    cp->cid_len = cid_len;
    if (buf_put(&d->arena, cid, cid_len) < 0) return -1;
    cp->par_off = d->arena.len;
    cp->par_len = par_len;
    if (par_len > 0 && buf_put(&d->arena, par, par_len) < 0) return -1;
    cp->md_off = d->arena.len;
    cp->md_len = md_len;
    if (buf_put(&d->arena, md, md_len) < 0) return -1;
    d->ncps++;
    return 0;
bad:
    d->bad = 1;
    return 0;
}

#define CID(d, i) ((d)->arena.p + (d)->cps[i].cid_off), ((d)->cps[i].cid_len)

/* Index of the row with id (p, n) among rows [lo, hi), or -1. Rows are in id order there. */
static Py_ssize_t find_id(const Digester *d, Py_ssize_t lo, Py_ssize_t hi, const char *p, Py_ssize_t n) {
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        int c = cmp_bytes(d->arena.p + d->cps[mid].cid_off, d->cps[mid].cid_len, p, n);
        if (c == 0) return mid;
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return -1;
}

static const Digester *sort_ctx;

static int by_ts_then_id(const void *a, const void *b) {
    const Cp *x = &sort_ctx->cps[*(const int32_t *)a], *y = &sort_ctx->cps[*(const int32_t *)b];
    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    return cmp_bytes(sort_ctx->arena.p + x->cid_off, x->cid_len, sort_ctx->arena.p + y->cid_off, y->cid_len);
}

typedef struct {
    const char *p;
    Py_ssize_t n;
} Str;

static int by_str(const void *a, const void *b) {
    const Str *x = a, *y = b;
    return cmp_bytes(x->p, x->n, y->p, y->n);
}

static PyObject *cid_str(const Digester *d, Py_ssize_t i) {
    return PyUnicode_DecodeUTF8(d->arena.p + d->cps[i].cid_off, d->cps[i].cid_len, "strict");
}

/* The per-checkpoint half of the transform; returns the tuple next() hands over. */
static PyObject *digest_thread(Digester *d) {
    Py_ssize_t n = d->ncps, nroots = 0;
    while (nroots < n && d->cps[nroots].ns_len == 0) nroots++; /* '' sorts first */
    Py_ssize_t nitems = PyList_GET_SIZE(d->items);
    d->nroots = nroots;
    d->nitems = nitems;

    PyObject *result = NULL, *payloads = NULL, *first_cids = NULL;
    int32_t *ord = PyMem_Malloc(sizeof(int32_t) * (size_t)(nroots ? nroots : 1));
    int32_t *newnum = PyMem_Malloc(sizeof(int32_t) * (size_t)(nitems ? nitems : 1));
    int32_t *old_of = PyMem_Malloc(sizeof(int32_t) * (size_t)(nitems ? nitems : 1));
    int32_t *first_cp = PyMem_Malloc(sizeof(int32_t) * (size_t)(nitems ? nitems : 1));
    int32_t *memo = PyMem_Malloc(sizeof(int32_t) * (size_t)(nroots ? nroots : 1));
    int32_t *onpath = PyMem_Calloc((size_t)(nroots ? nroots : 1), sizeof(int32_t));
    int32_t *path = PyMem_Malloc(sizeof(int32_t) * (size_t)(nroots ? nroots : 1));
    Str *missing = PyMem_Malloc(sizeof(Str) * (size_t)(nroots ? nroots : 1));
    d->rv_off = PyMem_Malloc(sizeof(Py_ssize_t) * (size_t)(nroots ? nroots : 1));
    d->rv_len = PyMem_Malloc(sizeof(Py_ssize_t) * (size_t)(nroots ? nroots : 1));
    d->grp_end = PyMem_Malloc(sizeof(int32_t) * (size_t)(n ? n : 1));
    d->children = PyMem_Calloc((size_t)(n ? n : 1), sizeof(int32_t));
    d->parent_root = PyMem_Malloc(sizeof(int32_t) * (size_t)(nroots ? nroots : 1));
    d->current = PyMem_Calloc((size_t)(nroots ? nroots : 1), 1);
    d->hang = PyMem_Malloc(sizeof(int32_t) * (size_t)(nroots ? nroots : 1));
    Py_ssize_t nrv = 0;
    for (Py_ssize_t r = 0; r < nroots; r++)
        if (d->cps[r].ver_len > 0) nrv += d->cps[r].ver_len;
    d->rvers = PyMem_Malloc(sizeof(int32_t) * (size_t)(nrv ? nrv : 1));
    if (!ord || !newnum || !old_of || !first_cp || !memo || !onpath || !path || !missing || !d->rv_off || !d->rv_len ||
        !d->grp_end || !d->children || !d->parent_root || !d->current || !d->hang || !d->rvers) {
        PyErr_NoMemory();
        goto done;
    }

    /* Versions: numbered by first appearance walking the roots oldest first (ts, then id). */
    int by_time = 1;
    for (Py_ssize_t r = 0; r < nroots; r++) {
        ord[r] = (int32_t)r;
        if (r && d->cps[r].ts < d->cps[r - 1].ts) by_time = 0;
    }
    if (!by_time) {
        sort_ctx = d;
        qsort(ord, (size_t)nroots, sizeof(int32_t), by_ts_then_id);
    }
    for (Py_ssize_t v = 0; v < nitems; v++) newnum[v] = -1;
    Py_ssize_t k = 0;
    const int32_t *prev = NULL;
    Py_ssize_t plen = 0;
    for (Py_ssize_t j = 0; j < nroots; j++) {
        const Cp *cp = &d->cps[ord[j]];
        if (cp->ver_len < 0) continue;
        const int32_t *cur = d->vers + cp->ver_off;
        Py_ssize_t start = (cp->ver_len >= plen && (plen == 0 || memcmp(cur, prev, sizeof(int32_t) * (size_t)plen) == 0)) ? plen : 0;
        for (Py_ssize_t i = start; i < cp->ver_len; i++) {
            int32_t v = cur[i];
            if (newnum[v] < 0) {
                newnum[v] = (int32_t)k;
                old_of[k] = v;
                first_cp[k] = ord[j];
                k++;
            }
        }
        prev = cur;
        plen = cp->ver_len;
    }
    nrv = 0;
    for (Py_ssize_t r = 0; r < nroots; r++) {
        const Cp *cp = &d->cps[r];
        d->rv_off[r] = nrv;
        d->rv_len[r] = cp->ver_len > 0 ? cp->ver_len : 0;
        for (Py_ssize_t i = 0; i < d->rv_len[r]; i++) d->rvers[nrv++] = newnum[d->vers[cp->ver_off + i]];
    }

    payloads = PyList_New(k);
    first_cids = PyList_New(k);
    if (!payloads || !first_cids) goto done;
    PyObject *last_cid = NULL;
    int32_t last_cp = -1;
    for (Py_ssize_t v = 0; v < k; v++) {
        PyList_SET_ITEM(payloads, v, Py_NewRef(PyList_GET_ITEM(d->items, old_of[v])));
        if (first_cp[v] != last_cp) {
            last_cid = cid_str(d, first_cp[v]);
            if (last_cid == NULL) goto done;
            last_cp = first_cp[v];
        } else {
            Py_INCREF(last_cid);
        }
        PyList_SET_ITEM(first_cids, v, last_cid);
    }

    /* Tree shape: children per row, namespace groups, parents among the roots. */
    Py_ssize_t nns = 0;
    for (Py_ssize_t i = 0; i < n;) {
        Py_ssize_t j = i + 1;
        while (j < n && cmp_bytes(d->arena.p + d->cps[j].ns_off, d->cps[j].ns_len, d->arena.p + d->cps[i].ns_off, d->cps[i].ns_len) == 0) j++;
        for (Py_ssize_t x = i; x < j; x++) d->grp_end[x] = (int32_t)j;
        nns++;
        i = j;
    }
    Py_ssize_t nmissing = 0;
    for (Py_ssize_t i = 0, lo = 0; i < n; i++) {
        if (i && d->grp_end[i] != d->grp_end[i - 1]) lo = i;
        const Cp *cp = &d->cps[i];
        Py_ssize_t p = cp->par_len < 0 ? -1 : find_id(d, lo, d->grp_end[i], d->arena.p + cp->par_off, cp->par_len);
        if (p >= 0) d->children[p]++;
        if (i < nroots) {
            d->parent_root[i] = (int32_t)p;
            if (p < 0 && cp->par_len >= 0) {
                missing[nmissing].p = d->arena.p + cp->par_off;
                missing[nmissing].n = cp->par_len;
                nmissing++;
            }
        }
    }
    long fork_count = 0, branch_count = 0;
    for (Py_ssize_t r = 0; r < nroots; r++) {
        fork_count += d->children[r] > 1;
        branch_count += d->children[r] == 0;
    }
    /* A parent id that names no checkpoint still counts as a fork point when several name it. */
    qsort(missing, (size_t)nmissing, sizeof(Str), by_str);
    for (Py_ssize_t i = 0; i < nmissing;) {
        Py_ssize_t j = i + 1;
        while (j < nmissing && by_str(&missing[i], &missing[j]) == 0) j++;
        fork_count += (j - i) > 1;
        i = j;
    }

    /* The current branch: from the latest root up its parents. */
    Py_ssize_t latest_root = nroots - 1;
    for (Py_ssize_t node = latest_root; node >= 0 && !d->current[node]; node = d->parent_root[node]) d->current[node] = 1;
    /* Where every other root hangs from the current branch (transform's hang_point). */
    for (Py_ssize_t r = 0; r < nroots; r++) memo[r] = -2;
    int32_t stamp = 0;
    for (Py_ssize_t r = 0; r < nroots; r++) {
        d->hang[r] = -1;
        if (d->current[r]) continue;
        stamp++;
        Py_ssize_t depth = 0, node = r;
        int32_t found = -1;
        while (node >= 0) {
            if (d->current[node]) {
                found = (int32_t)node;
                break;
            }
            if (memo[node] != -2) {
                found = memo[node];
                break;
            }
            path[depth++] = (int32_t)node;
            onpath[node] = stamp;
            node = d->parent_root[node];
            if (node >= 0 && onpath[node] == stamp) break; /* a cycle */
        }
        for (Py_ssize_t x = 0; x < depth; x++) memo[path[x]] = found;
        d->hang[r] = found;
    }

    int64_t ts_min = 0, ts_max = 0;
    for (Py_ssize_t r = 0; r < nroots; r++) {
        int64_t t = d->cps[r].ts;
        if (r == 0 || t < ts_min) ts_min = t;
        if (r == 0 || t > ts_max) ts_max = t;
    }
    PyObject *latest_cid = NULL, *latest_leaf = NULL, *t0 = NULL, *t1 = NULL;
    if (latest_root >= 0) {
        latest_cid = cid_str(d, latest_root);
        if (latest_cid == NULL) goto done;
        latest_leaf = PyBool_FromLong(d->children[latest_root] == 0);
        t0 = PyLong_FromLongLong(ts_min);
        t1 = PyLong_FromLongLong(ts_max);
        if (t0 == NULL || t1 == NULL) {
            Py_DECREF(latest_cid);
            Py_XDECREF(t0);
            Py_XDECREF(t1);
            goto done;
        }
    } else {
        latest_cid = Py_NewRef(Py_None);
        latest_leaf = Py_NewRef(Py_None);
        t0 = Py_NewRef(Py_None);
        t1 = Py_NewRef(Py_None);
    }
    PyObject *tid = PyUnicode_DecodeUTF8(d->tid.p, d->tid.len, "strict");
    if (tid == NULL) {
        Py_DECREF(latest_cid);
        Py_DECREF(latest_leaf);
        Py_DECREF(t0);
        Py_DECREF(t1);
        goto done;
    }
    result = Py_BuildValue("(sNOO(NNnnnNNll))", "thread", tid, payloads, first_cids, t0, t1, n, nroots, nns,
                           latest_cid, latest_leaf, branch_count, fork_count);
    if (result != NULL) {
        d->ready = 1;
        d->nnew = k;
        d->first_cp = first_cp; /* (finish() needs it) */
        first_cp = NULL;
    }
done:
    Py_XDECREF(payloads);
    Py_XDECREF(first_cids);
    PyMem_Free(ord);
    PyMem_Free(newnum);
    PyMem_Free(old_of);
    PyMem_Free(first_cp);
    PyMem_Free(memo);
    PyMem_Free(onpath);
    PyMem_Free(path);
    PyMem_Free(missing);
    return result;
}

/* --- the Python type ---------------------------------------------------------- */

static int Digester_init(Digester *d, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"uri", "sql", "params", "wanted", "error", NULL};
    const char *uri, *sql;
    PyObject *params, *wanted, *error;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "ssOOO", kwlist, &uri, &sql, &params, &wanted, &error)) return -1;
    if (!PyList_Check(params) || (wanted != Py_None && !PyAnySet_Check(wanted)) || !PyExceptionClass_Check(error)) {
        PyErr_SetString(PyExc_TypeError, "Digester(uri, sql, params: list[str], wanted: set | None, error: exception class)");
        return -1;
    }
    for (int i = 0; i < K_NCOLS; i++) d->ck[i].kind = ck_kinds[i];
    for (int i = 0; i < E_NCOLS; i++) d->ev[i].kind = ev_kinds[i];
    for (int i = 0; i < M_NCOLS; i++) d->mc[i].kind = col_kind(m_kinds[i]);
    for (int i = 0; i < V_NCOLS; i++) d->vc[i].kind = col_kind(v_kinds[i]);
    d->error = Py_NewRef(error);
    d->wanted = wanted == Py_None ? NULL : Py_NewRef(wanted);
    if (thread_reset(d) < 0) return -1;
    int rc = sqlite3_open_v2(uri, &d->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        PyErr_SetString(error, d->db ? sqlite3_errmsg(d->db) : "cannot open the store");
        return -1;
    }
    if (sqlite3_prepare_v2(d->db, sql, -1, &d->stmt, NULL) != SQLITE_OK) return db_error(d);
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(params); i++) {
        Py_ssize_t len;
        const char *p = PyUnicode_AsUTF8AndSize(PyList_GET_ITEM(params, i), &len);
        if (p == NULL) return -1;
        if (sqlite3_bind_text(d->stmt, (int)i + 1, p, (int)len, SQLITE_TRANSIENT) != SQLITE_OK) return db_error(d);
    }
    return 0;
}

static void Digester_close_db(Digester *d) {
    if (d->stmt) sqlite3_finalize(d->stmt);
    if (d->db) sqlite3_close_v2(d->db);
    d->stmt = NULL;
    d->db = NULL;
    d->done = 1;
}

static void Digester_dealloc(Digester *d) {
    Digester_close_db(d);
    thread_free(d);
    buf_free(&d->tid);
    buf_free(&d->arena);
    PyMem_Free(d->cps);
    PyMem_Free(d->vers);
    for (int i = 0; i < K_NCOLS; i++) col_free(&d->ck[i]);
    for (int i = 0; i < E_NCOLS; i++) col_free(&d->ev[i]);
    for (int i = 0; i < M_NCOLS; i++) col_free(&d->mc[i]);
    for (int i = 0; i < V_NCOLS; i++) col_free(&d->vc[i]);
    Py_XDECREF(d->items);
    Py_XDECREF(d->index);
    Py_XDECREF(d->wanted);
    Py_XDECREF(d->error);
    Py_TYPE(d)->tp_free((PyObject *)d);
}

static int step(Digester *d) {
    int rc = sqlite3_step(d->stmt);
    if (rc == SQLITE_ROW) {
        d->have_row = 1;
        return 1;
    }
    d->have_row = 0;
    if (rc == SQLITE_DONE) {
        d->done = 1;
        return 0;
    }
    return db_error(d);
}

PyDoc_STRVAR(next_doc,
"next() -> None | ('stop',) | ('fallback', thread_id) | ('thread', thread_id, payloads, first_checkpoint_ids,\n"
"    (first_ts, last_ts, checkpoints, roots, namespaces, latest_root, latest_is_leaf,\n"
"    branch_count, fork_count))\n\n"
"Read the next thread. None: no more. 'stop': the next row's thread id is not UTF-8 text;\n"
"read the rest without the digester. 'fallback': a row of this thread is not in the common\n"
"shape; read the thread without it. 'thread': call finish() next.");

static PyObject *Digester_next(Digester *d, PyObject *unused) {
    if (d->stmt == NULL) {
        PyErr_SetString(PyExc_ValueError, "the digester is closed");
        return NULL;
    }
    for (;;) {
        if (d->done && !d->have_row) Py_RETURN_NONE;
        if (!d->have_row) {
            int r = step(d);
            if (r < 0) return NULL;
            if (r == 0) Py_RETURN_NONE;
        }
        Py_ssize_t tlen;
        const char *tid = text_col(d->stmt, 0, &tlen);
        if (tid == NULL) {
            d->done = 1;
            d->have_row = 0;
            return Py_BuildValue("(s)", "stop");
        }
        if (thread_reset(d) < 0 || buf_put(&d->tid, tid, tlen) < 0) return NULL;
        int skip = 0;
        if (d->wanted != NULL) {
            PyObject *key = PyUnicode_DecodeUTF8(tid, tlen, "strict");
            if (key == NULL) return NULL;
            int in = PySet_Contains(d->wanted, key);
            Py_DECREF(key);
            if (in < 0) return NULL;
            skip = !in;
        }
        for (;;) {
            if (!skip && !d->bad && read_row(d) < 0) return NULL;
            int r = step(d);
            if (r < 0) return NULL;
            if (r == 0) break;
            if (sqlite3_column_type(d->stmt, 0) != SQLITE_TEXT) break;
            const void *next_tid = sqlite3_column_text(d->stmt, 0);
            if (next_tid == NULL) next_tid = "";
            if (sqlite3_column_bytes(d->stmt, 0) != d->tid.len || memcmp(next_tid, d->tid.p, (size_t)d->tid.len) != 0) break;
        }
        if (skip) continue;
        if (d->bad || d->ncps == 0) {
            PyObject *t = PyUnicode_DecodeUTF8(d->tid.p, d->tid.len, "strict");
            return t ? Py_BuildValue("(sN)", "fallback", t) : NULL;
        }
        return digest_thread(d);
    }
}

typedef struct {
    Digester *d;
    PyObject *decoded;  /* list: decode.Message or None per version */
    Py_ssize_t removed, edited;
} Events;

static PyObject *message_id(PyObject *decoded, int32_t v) {
    PyObject *m = PyList_GET_ITEM(decoded, v);
    return m == Py_None ? Py_None : PyTuple_GET_ITEM(m, MSG_ID);
}

static int put_text(Col *c, const char *p, Py_ssize_t n) { return col_str(c, p, n); }

enum { EV_ADDED, EV_REMOVED, EV_EDITED, EV_REORDERED };
static const char *const ev_names[] = {"added", "removed", "edited", "reordered"};

/* One history event row of root r; v / pv -1: NULL. */
static int event(Events *e, Py_ssize_t r, int kind, Py_ssize_t pos, int32_t v, int32_t pv) {
    const char *what = ev_names[kind];
    Digester *d = e->d;
    const Cp *cp = &d->cps[r];
    Col *ev = d->ev;
    int32_t mv = v >= 0 ? v : pv;
    if (put_text(&ev[E_TID], d->tid.p, d->tid.len) < 0 || put_text(&ev[E_CID], CID(d, r)) < 0) return -1;
    if ((cp->par_len < 0 ? col_null(&ev[E_PARENT]) : put_text(&ev[E_PARENT], d->arena.p + cp->par_off, cp->par_len)) < 0) return -1;
    if (col_i64(&ev[E_TS], cp->ts) < 0 || put_text(&ev[E_EVENT], what, (Py_ssize_t)strlen(what)) < 0) return -1;
    if (col_put(&ev[E_MID], 's', message_id(e->decoded, mv)) < 0 || col_i32(&ev[E_POS], (int32_t)pos) < 0) return -1;
    if ((v >= 0 ? col_i32(&ev[E_VER], v) : col_null(&ev[E_VER])) < 0) return -1;
    if ((pv >= 0 ? col_i32(&ev[E_PREV], pv) : col_null(&ev[E_PREV])) < 0) return -1;
    if (d->current[r]) {
        e->removed += kind == EV_REMOVED;
        e->edited += kind == EV_EDITED;
    }
    return 0;
}

PyDoc_STRVAR(finish_doc,
"finish(decoded, key, interrupts) -> (removed_on_current, edited_on_current, transcript_rows)\n\n"
"After next() gave a thread: decoded[v] is version v's decode.Message, or None when it\n"
"is not a message; key is (tenant_id, sub_tenant_id, session_id); interrupts a set of\n"
"(namespace, checkpoint_id) or None. Appends the thread's checkpoints, message_events,\n"
"message_versions and messages rows to the staged columns, as transform_thread makes them.");

/* Identity of each version (its id, or its own when it has none) and what counts for an
 * edit (Message.signature(): role, content, tool calls, name; -1 undecodable), as small
 * ints: equal ints for equal values. */
static int identities(PyObject *decoded, Py_ssize_t k, int32_t *ident, int32_t *sig, int32_t *max_ident) {
    PyObject *ids = PyDict_New(), *sigs = PyDict_New();
    int rc = -1;
    int32_t next = 0;
    if (ids == NULL || sigs == NULL) goto done;
    for (Py_ssize_t v = 0; v < k; v++) {
        PyObject *m = PyList_GET_ITEM(decoded, v);
        sig[v] = -1;
        if (m == Py_None || PyTuple_GET_ITEM(m, MSG_ID) == Py_None) {
            ident[v] = next++;
        } else {
            PyObject *n = PyLong_FromLong(next);
            if (n == NULL) goto done;
            PyObject *got = PyDict_SetDefault(ids, PyTuple_GET_ITEM(m, MSG_ID), n);
            Py_DECREF(n);
            if (got == NULL) goto done;
            ident[v] = (int32_t)PyLong_AsLong(got);
            if (ident[v] == next) next++;
        }
        if (m != Py_None) {
            PyObject *key = PyTuple_Pack(4, PyTuple_GET_ITEM(m, MSG_ROLE), PyTuple_GET_ITEM(m, MSG_CONTENT),
                                         PyTuple_GET_ITEM(m, MSG_TOOL_CALLS), PyTuple_GET_ITEM(m, MSG_NAME));
            PyObject *n = key ? PyLong_FromSsize_t(PyDict_GET_SIZE(sigs)) : NULL;
            PyObject *got = n ? PyDict_SetDefault(sigs, key, n) : NULL;
            Py_XDECREF(key);
            Py_XDECREF(n);
            if (got == NULL) goto done;
            sig[v] = (int32_t)PyLong_AsLong(got);
        }
    }
    *max_ident = next > 0 ? next - 1 : 0;
    rc = 0;
done:
    Py_XDECREF(ids);
    Py_XDECREF(sigs);
    return rc;
}

#define FIELD(m, f) PyTuple_GET_ITEM((m), (f))

static Py_ssize_t text_chars(PyObject *s) { return PyUnicode_Check(s) ? PyUnicode_GET_LENGTH(s) : 0; }

/* The message_versions rows (transform.versions_rows). */
static int version_rows(Digester *d, PyObject *decoded) {
    Col *c = d->vc;
    for (Py_ssize_t v = 0; v < d->nnew; v++) {
        PyObject *m = PyList_GET_ITEM(decoded, v);
        if (m == Py_None) continue;
        int32_t r = d->first_cp[v];
        if (col_str(&c[0], d->tid.p, d->tid.len) < 0 || col_i32(&c[1], (int32_t)v) < 0 ||
            col_put(&c[2], 's', FIELD(m, MSG_ID)) < 0 || col_put(&c[3], 's', FIELD(m, MSG_LC_TYPE)) < 0 ||
            col_put(&c[4], 's', FIELD(m, MSG_ROLE)) < 0 || col_put(&c[5], 's', FIELD(m, MSG_NAME)) < 0 ||
            col_put(&c[6], 's', FIELD(m, MSG_CONTENT)) < 0 || col_i32(&c[7], (int32_t)text_chars(FIELD(m, MSG_CONTENT))) < 0 ||
            col_put(&c[8], 'i', FIELD(m, MSG_NON_TEXT)) < 0 || col_put(&c[9], 's', FIELD(m, MSG_TOOL_CALLS)) < 0 ||
            col_put(&c[10], 'i', FIELD(m, MSG_TOOL_COUNT)) < 0 || col_put(&c[11], 's', FIELD(m, MSG_TOOL_CALL_ID)) < 0 ||
            col_put(&c[12], 's', FIELD(m, MSG_TOOL_STATUS)) < 0 || col_str(&c[13], CID(d, r)) < 0 ||
            col_i64(&c[14], d->cps[r].ts) < 0)
            return -1;
    }
    return 0;
}

/* The messages rows (transform.transcript_rows): the latest root's list; a message's ts
 * is its id's first sighting (the first version holding the id). -1, or the row count. */
static Py_ssize_t message_rows(Digester *d, PyObject *decoded, PyObject *key) {
    Py_ssize_t latest = d->nroots - 1;
    if (latest < 0) return 0;
    PyObject *first_seen = PyDict_New();
    if (first_seen == NULL) return -1;
    Py_ssize_t rows = -1;
    for (Py_ssize_t v = 0; v < d->nnew; v++) {
        PyObject *m = PyList_GET_ITEM(decoded, v);
        if (m == Py_None || FIELD(m, MSG_ID) == Py_None) continue;
        PyObject *n = PyLong_FromSsize_t(v);
        if (n == NULL || PyDict_SetDefault(first_seen, FIELD(m, MSG_ID), n) == NULL) {
            Py_XDECREF(n);
            goto done;
        }
        Py_DECREF(n);
    }
    Col *c = d->mc;
    Py_ssize_t count = 0;
    const int32_t *list = d->rvers + d->rv_off[latest];
    for (Py_ssize_t ordinal = 0; ordinal < d->rv_len[latest]; ordinal++) {
        int32_t v = list[ordinal];
        PyObject *m = PyList_GET_ITEM(decoded, v);
        if (m == Py_None) continue;
        Py_ssize_t seen = -1;
        if (FIELD(m, MSG_ID) != Py_None) {
            PyObject *s = PyDict_GetItemWithError(first_seen, FIELD(m, MSG_ID));
            if (s == NULL) goto done; /* (every id is there) */
            seen = PyLong_AsSsize_t(s);
        }
        int32_t r = seen >= 0 ? d->first_cp[seen] : -1;
        if (col_str(&c[0], d->tid.p, d->tid.len) < 0 || col_put(&c[1], 's', PyTuple_GET_ITEM(key, 0)) < 0 ||
            col_put(&c[2], 's', PyTuple_GET_ITEM(key, 1)) < 0 || col_put(&c[3], 's', PyTuple_GET_ITEM(key, 2)) < 0 ||
            col_i32(&c[4], (int32_t)ordinal) < 0 || col_put(&c[5], 's', FIELD(m, MSG_ROLE)) < 0 ||
            col_put(&c[6], 's', FIELD(m, MSG_LC_TYPE)) < 0 || col_put(&c[7], 's', FIELD(m, MSG_CHAT_ROLE)) < 0 ||
            col_put(&c[8], 's', FIELD(m, MSG_NAME)) < 0 || col_put(&c[9], 's', FIELD(m, MSG_CONTENT)) < 0 ||
            col_i32(&c[10], (int32_t)text_chars(FIELD(m, MSG_CONTENT))) < 0 || col_put(&c[11], 'i', FIELD(m, MSG_NON_TEXT)) < 0 ||
            col_put(&c[12], 's', FIELD(m, MSG_ID)) < 0 ||
            (r >= 0 ? col_i64(&c[13], d->cps[r].ts) : col_null(&c[13])) < 0 ||
            (r >= 0 ? col_str(&c[14], CID(d, r)) : col_null(&c[14])) < 0 ||
            col_put(&c[15], 's', FIELD(m, MSG_TOOL_CALLS)) < 0 || col_put(&c[16], 'i', FIELD(m, MSG_TOOL_COUNT)) < 0 ||
            col_put(&c[17], 's', FIELD(m, MSG_TOOL_CALL_ID)) < 0 || col_put(&c[18], 's', FIELD(m, MSG_TOOL_STATUS)) < 0 ||
            col_put(&c[19], 'l', FIELD(m, MSG_INPUT)) < 0 || col_put(&c[20], 'l', FIELD(m, MSG_OUTPUT)) < 0 ||
            col_put(&c[21], 'l', FIELD(m, MSG_TOTAL)) < 0 || col_put(&c[22], 's', FIELD(m, MSG_MODEL)) < 0 ||
            col_put(&c[23], 's', FIELD(m, MSG_USAGE)) < 0 || col_put(&c[24], 's', FIELD(m, MSG_RESPONSE)) < 0 ||
            col_put(&c[25], 's', FIELD(m, MSG_ADDITIONAL)) < 0 || col_i32(&c[26], v) < 0)
            goto done;
        count++;
    }
    rows = count;
done:
    Py_DECREF(first_seen);
    return rows;
}

static PyObject *Digester_finish(Digester *d, PyObject *args) {
    PyObject *decoded, *key, *interrupts;
    if (!PyArg_ParseTuple(args, "OOO", &decoded, &key, &interrupts)) return NULL;
    if (!d->ready) {
        PyErr_SetString(PyExc_ValueError, "finish() without a thread from next()");
        return NULL;
    }
    Py_ssize_t k = d->nnew; /* every version in a root list is < k */
    if (!PyList_Check(decoded) || PyList_GET_SIZE(decoded) != k || !PyTuple_Check(key) || PyTuple_GET_SIZE(key) != 3 ||
        (interrupts != Py_None && !PyAnySet_Check(interrupts))) {
        PyErr_SetString(PyExc_ValueError, "finish(decoded: list per version, key: 3-tuple, interrupts)");
        return NULL;
    }
    for (Py_ssize_t v = 0; v < k; v++) {
        PyObject *m = PyList_GET_ITEM(decoded, v);
        if (m != Py_None && (!PyTuple_Check(m) || PyTuple_GET_SIZE(m) != MSG_NFIELDS)) {
            PyErr_SetString(PyExc_TypeError, "finish(): decoded versions are decode.Message tuples or None");
            return NULL;
        }
    }
    PyObject *result = NULL;
    int32_t *ident = PyMem_Malloc(sizeof(int32_t) * (size_t)(k ? k : 1));
    int32_t *sig = PyMem_Malloc(sizeof(int32_t) * (size_t)(k ? k : 1));
    int32_t *mark = NULL, *bi = NULL, *bv = NULL, *ai = NULL, *av = NULL, *bseen = NULL, *aseen = NULL, *keys = NULL, *common = NULL;
    unsigned char *moved = NULL;
    int32_t max_ident = 0;
    if (ident == NULL || sig == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    if (identities(decoded, k, ident, sig, &max_ident) < 0) goto done;
    size_t ni = (size_t)max_ident + 1;
    Py_ssize_t longest = 0;
    for (Py_ssize_t r = 0; r < d->nroots; r++)
        if (d->rv_len[r] > longest) longest = d->rv_len[r];
    mark = PyMem_Calloc(ni, sizeof(int32_t));
    bseen = PyMem_Calloc(ni, sizeof(int32_t));
    aseen = PyMem_Calloc(ni, sizeof(int32_t));
    bi = PyMem_Malloc(sizeof(int32_t) * ni);
    bv = PyMem_Malloc(sizeof(int32_t) * ni);
    ai = PyMem_Malloc(sizeof(int32_t) * ni);
    av = PyMem_Malloc(sizeof(int32_t) * ni);
    moved = PyMem_Calloc(ni, 1);
    keys = PyMem_Malloc(sizeof(int32_t) * (size_t)(2 * longest + 2));
    common = PyMem_Malloc(sizeof(int32_t) * (size_t)(2 * longest + 2));
    if (!mark || !bseen || !aseen || !bi || !bv || !ai || !av || !moved || !keys || !common) {
        PyErr_NoMemory();
        goto done;
    }

    Events e = {d, decoded, 0, 0};
    int32_t gen = 0, chain_gen = 0;
    Py_ssize_t chain_at = -1;
    static const int32_t empty[1] = {0};
    for (Py_ssize_t r = 0; r < d->nroots; r++) {
        const int32_t *cur = d->rvers + d->rv_off[r];
        Py_ssize_t clen = d->rv_len[r];
        Py_ssize_t p = d->parent_root[r];
        const int32_t *prev = p >= 0 ? d->rvers + d->rv_off[p] : empty;
        Py_ssize_t plen = p >= 0 ? d->rv_len[p] : 0;
        int on_chain = p >= 0 && p == chain_at;
        int prefix = clen >= plen && (plen == 0 || memcmp(cur, prev, sizeof(int32_t) * (size_t)plen) == 0);
        if (prefix && clen == plen) {
            if (on_chain) chain_at = r;
            continue;
        }
        if (prefix) {
            if (!on_chain) {
                chain_gen = ++gen;
                for (Py_ssize_t i = 0; i < plen; i++) mark[ident[prev[i]]] = chain_gen;
            }
            int clash = 0;
            for (Py_ssize_t i = plen; i < clen && !clash; i++) clash = mark[ident[cur[i]]] == chain_gen;
            if (!clash) {
                for (Py_ssize_t i = plen; i < clen; i++) {
                    if (event(&e, r, EV_ADDED, i, cur[i], -1) < 0) goto done;
                    mark[ident[cur[i]]] = chain_gen;
                }
                chain_at = r;
                continue;
            }
        }
        /* transform._diff: first occurrence of each identity on either side. */
        chain_at = -1;
        int32_t g = ++gen;
        Py_ssize_t nb = 0, na = 0;
        for (Py_ssize_t i = 0; i < plen; i++) {
            int32_t id = ident[prev[i]];
            if (bseen[id] != g) {
                bseen[id] = g;
                bi[id] = (int32_t)i;
                bv[id] = prev[i];
                keys[nb++] = id;
            }
        }
        int32_t *akeys = keys + nb;
        for (Py_ssize_t i = 0; i < clen; i++) {
            int32_t id = ident[cur[i]];
            if (aseen[id] != g) {
                aseen[id] = g;
                ai[id] = (int32_t)i;
                av[id] = cur[i];
                akeys[na++] = id;
            }
        }
        Py_ssize_t nc = 0;
        for (Py_ssize_t x = 0; x < nb; x++) {
            int32_t id = keys[x];
            if (aseen[id] != g) {
                if (event(&e, r, EV_REMOVED, bi[id], -1, bv[id]) < 0) goto done;
            } else {
                common[nc++] = id;
            }
        }
        Py_ssize_t y = 0;
        for (Py_ssize_t x = 0; x < na; x++) {
            int32_t id = akeys[x];
            moved[id] = 0;
            if (bseen[id] == g) {
                moved[id] = id != common[y];
                y++;
            }
        }
        for (Py_ssize_t x = 0; x < na; x++) {
            int32_t id = akeys[x];
            if (bseen[id] != g) {
                if (event(&e, r, EV_ADDED, ai[id], av[id], -1) < 0) goto done;
                continue;
            }
            int32_t v = av[id], pv = bv[id];
            if (pv != v && sig[pv] != sig[v] && event(&e, r, EV_EDITED, ai[id], v, pv) < 0) goto done;
            if (moved[id] && event(&e, r, EV_REORDERED, ai[id], v, pv) < 0) goto done;
        }
    }

    /* Checkpoint rows, in the reader's order. */
    Col *ck = d->ck;
    for (Py_ssize_t i = 0; i < d->ncps; i++) {
        const Cp *cp = &d->cps[i];
        int is_root = i < d->nroots;
        int interrupt = 0;
        if (interrupts != Py_None && PySet_GET_SIZE(interrupts) > 0) {
            PyObject *key = Py_BuildValue("(s#s#)", d->arena.p + cp->ns_off, cp->ns_len, CID(d, i));
            if (key == NULL) goto done;
            interrupt = PySet_Contains(interrupts, key);
            Py_DECREF(key);
            if (interrupt < 0) goto done;
        }
        if (put_text(&ck[K_TID], d->tid.p, d->tid.len) < 0 || put_text(&ck[K_NS], d->arena.p + cp->ns_off, cp->ns_len) < 0 ||
            put_text(&ck[K_CID], CID(d, i)) < 0)
            goto done;
        if ((cp->par_len < 0 ? col_null(&ck[K_PARENT]) : put_text(&ck[K_PARENT], d->arena.p + cp->par_off, cp->par_len)) < 0) goto done;
        if (col_i64(&ck[K_TS], cp->ts) < 0) goto done;
        if ((cp->ver_len < 0 ? col_null(&ck[K_MCOUNT]) : col_i32(&ck[K_MCOUNT], (int32_t)cp->ver_len)) < 0) goto done;
        if ((is_root ? col_list(&ck[K_VERSIONS], d->rvers + d->rv_off[i], d->rv_len[i]) : col_null(&ck[K_VERSIONS])) < 0) goto done;
        if (col_bool(&ck[K_ROOT], is_root) < 0 || col_bool(&ck[K_LATEST], d->grp_end[i] == i + 1) < 0 ||
            col_bool(&ck[K_LEAF], d->children[i] == 0) < 0 || col_bool(&ck[K_CURRENT], is_root && d->current[i]) < 0)
            goto done;
        if (is_root && !d->current[i] && d->hang[i] >= 0) {
            if (put_text(&ck[K_BRANCH], CID(d, d->hang[i])) < 0) goto done;
        } else if (col_null(&ck[K_BRANCH]) < 0) {
            goto done;
        }
        if (col_bool(&ck[K_INTERRUPT], interrupt) < 0 || put_text(&ck[K_META], d->arena.p + cp->md_off, cp->md_len) < 0) goto done;
    }
    if (version_rows(d, decoded) < 0) goto done;
    Py_ssize_t transcript = message_rows(d, decoded, key);
    if (transcript < 0) goto done;
    result = Py_BuildValue("(nnn)", e.removed, e.edited, transcript);
done:
    /* A failure half-way leaves the columns with a partial thread: the caller fails the load. */
    d->ready = 0;
    PyMem_Free(ident);
    PyMem_Free(sig);
    PyMem_Free(mark);
    PyMem_Free(bseen);
    PyMem_Free(aseen);
    PyMem_Free(bi);
    PyMem_Free(bv);
    PyMem_Free(ai);
    PyMem_Free(av);
    PyMem_Free(moved);
    PyMem_Free(keys);
    PyMem_Free(common);
    return result;
}

PyDoc_STRVAR(take_doc,
"take(table) -> [column, ...] | None\n\n"
"The staged rows of 'checkpoints', 'message_events', 'messages' or 'message_versions' so far,\n"
"as Arrow buffers per column:\n"
"(length, null_count, validity, offsets, data, list_values); None when there are none.\n"
"checkpoints lacks step, source and run_id (all NULL).");

static PyObject *Digester_take(Digester *d, PyObject *arg) {
    Col *cols;
    int ncols;
    if (PyUnicode_Check(arg) && PyUnicode_CompareWithASCIIString(arg, "checkpoints") == 0) {
        cols = d->ck;
        ncols = K_NCOLS;
    } else if (PyUnicode_Check(arg) && PyUnicode_CompareWithASCIIString(arg, "message_events") == 0) {
        cols = d->ev;
        ncols = E_NCOLS;
    } else if (PyUnicode_Check(arg) && PyUnicode_CompareWithASCIIString(arg, "messages") == 0) {
        cols = d->mc;
        ncols = M_NCOLS;
    } else if (PyUnicode_Check(arg) && PyUnicode_CompareWithASCIIString(arg, "message_versions") == 0) {
        cols = d->vc;
        ncols = V_NCOLS;
    } else {
        PyErr_SetString(PyExc_ValueError, "take('checkpoints' | 'message_events' | 'messages' | 'message_versions')");
        return NULL;
    }
    if (cols[0].n == 0) Py_RETURN_NONE;
    PyObject *out = PyList_New(ncols);
    if (out == NULL) return NULL;
    for (int i = 0; i < ncols; i++) {
        PyObject *c = col_take(&cols[i]);
        if (c == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, i, c);
    }
    return out;
}

static PyObject *Digester_pending(Digester *d, PyObject *unused) {
    Py_ssize_t bytes = 0;
    for (int i = 0; i < K_NCOLS; i++) bytes += d->ck[i].data.len + d->ck[i].child.len;
    for (int i = 0; i < E_NCOLS; i++) bytes += d->ev[i].data.len;
    for (int i = 0; i < M_NCOLS; i++) bytes += d->mc[i].data.len;
    for (int i = 0; i < V_NCOLS; i++) bytes += d->vc[i].data.len;
    Py_ssize_t most = d->ck[0].n;
    if (d->ev[0].n > most) most = d->ev[0].n;
    if (d->mc[0].n > most) most = d->mc[0].n;
    if (d->vc[0].n > most) most = d->vc[0].n;
    return Py_BuildValue("(nn)", most, bytes);
}

static PyObject *Digester_close(Digester *d, PyObject *unused) {
    Digester_close_db(d);
    Py_RETURN_NONE;
}

static PyMethodDef Digester_methods[] = {
    {"next", (PyCFunction)Digester_next, METH_NOARGS, next_doc},
    {"finish", (PyCFunction)Digester_finish, METH_VARARGS, finish_doc},
    {"take", (PyCFunction)Digester_take, METH_O, take_doc},
    {"pending", (PyCFunction)Digester_pending, METH_NOARGS, "pending() -> (rows of the fullest table, bytes) staged so far"},
    {"close", (PyCFunction)Digester_close, METH_NOARGS, "close() -> None: finalize the statement, close the connection"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject DigesterType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "loaders._digest.Digester",
    .tp_basicsize = sizeof(Digester),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Digester(uri, sql, params, wanted, error): whole threads of a SqliteSaver store (see _digest.c)",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Digester_init,
    .tp_dealloc = (destructor)Digester_dealloc,
    .tp_methods = Digester_methods,
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "loaders._digest", "Whole threads of a SqliteSaver store, digested in C (see _digest.c).", -1, NULL,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__digest(void) {
    if (PyType_Ready(&DigesterType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    if (PyModule_AddObjectRef(m, "Digester", (PyObject *)&DigesterType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
