/* Transcript Lens: a read-ahead SQLite VFS for reading an immutable store.
 *
 * A SqliteSaver row is a checkpoint blob of tens of kB, stored as a chain of
 * overflow pages that SQLite reads one page (4 kB) per read() call: for a large
 * store that is millions of system calls, a third of a load's reading time.
 * The overflow pages of one blob are written one after another, so reads that
 * continue where the previous one ended are served from a buffer filled by one
 * larger read. Every other read goes to the file as it would without us.
 *
 * The VFS ("transcript-lens-readahead") wraps the default one and buffers only
 * a main database file opened read-only; every other file (journals, WAL,
 * temp files) is the default VFS's own. It is registered when this module is
 * imported and used only when a connection names it (`vfs=` in the URI), and
 * only for stores opened with `immutable=1`, which promises that the file does
 * not change while it is read, so a buffered page can never be stale.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <sqlite3.h>
#include <string.h>

#define VFS_NAME "transcript-lens-readahead"
#define CHUNK (128 * 1024)

typedef struct {
    sqlite3_file base;          /* pMethods = &ra_methods */
    sqlite3_file *real;         /* the default VFS's file, right after this struct */
    unsigned char *buf;         /* CHUNK bytes */
    sqlite3_int64 buf_off;      /* file offset of buf[0] */
    sqlite3_int64 buf_len;      /* valid bytes in buf */
    sqlite3_int64 last_end;     /* where the previous read ended */
    sqlite3_int64 size;         /* file size at open (the file is immutable) */
} RaFile;

static sqlite3_vfs ra_vfs;
static sqlite3_vfs *base_vfs;
/* Reads served from a buffer and reads that went to the file, for `stats()`
 * (approximate if connections of several threads read at once). */
static unsigned long long served, passed;

#define REAL(f) (((RaFile *)(f))->real)

static int ra_close(sqlite3_file *f) {
    RaFile *p = (RaFile *)f;
    int rc = p->real->pMethods->xClose(p->real);
    sqlite3_free(p->buf);
    p->buf = NULL;
    return rc;
}

static int ra_read(sqlite3_file *f, void *dst, int amt, sqlite3_int64 off) {
    RaFile *p = (RaFile *)f;
    int sequential = off == p->last_end;
    p->last_end = off + amt;
    if (off >= p->buf_off && off + amt <= p->buf_off + p->buf_len) {
        memcpy(dst, p->buf + (off - p->buf_off), (size_t)amt);
        served++;
        return SQLITE_OK;
    }
    passed++;
    /* Only a read that continues the previous one, fits a chunk and lies within
     * the file is read ahead: random reads (index pages) stay page-sized, and a
     * short read at the end of the file is the default VFS's to report. */
    if (!sequential || amt > CHUNK || off + amt > p->size) {
        return p->real->pMethods->xRead(p->real, dst, amt, off);
    }
    sqlite3_int64 len = p->size - off;
    if (len > CHUNK) len = CHUNK;
    int rc = p->real->pMethods->xRead(p->real, p->buf, (int)len, off);
    if (rc != SQLITE_OK) {
        p->buf_len = 0;
        return p->real->pMethods->xRead(p->real, dst, amt, off);
    }
    p->buf_off = off;
    p->buf_len = len;
    memcpy(dst, p->buf, (size_t)amt);
    return SQLITE_OK;
}

static int ra_write(sqlite3_file *f, const void *src, int amt, sqlite3_int64 off) {
    (void)f; (void)src; (void)amt; (void)off;
    return SQLITE_READONLY;
}
static int ra_truncate(sqlite3_file *f, sqlite3_int64 size) { (void)f; (void)size; return SQLITE_READONLY; }
static int ra_sync(sqlite3_file *f, int flags) { return REAL(f)->pMethods->xSync(REAL(f), flags); }
static int ra_file_size(sqlite3_file *f, sqlite3_int64 *size) { return REAL(f)->pMethods->xFileSize(REAL(f), size); }
static int ra_lock(sqlite3_file *f, int level) { return REAL(f)->pMethods->xLock(REAL(f), level); }
static int ra_unlock(sqlite3_file *f, int level) { return REAL(f)->pMethods->xUnlock(REAL(f), level); }
static int ra_check_reserved(sqlite3_file *f, int *out) { return REAL(f)->pMethods->xCheckReservedLock(REAL(f), out); }
static int ra_file_control(sqlite3_file *f, int op, void *arg) { return REAL(f)->pMethods->xFileControl(REAL(f), op, arg); }
static int ra_sector_size(sqlite3_file *f) { return REAL(f)->pMethods->xSectorSize(REAL(f)); }
static int ra_device(sqlite3_file *f) { return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f)); }
static int ra_shm_map(sqlite3_file *f, int pg, int sz, int extend, void volatile **pp) {
    return REAL(f)->pMethods->xShmMap(REAL(f), pg, sz, extend, pp);
}
static int ra_shm_lock(sqlite3_file *f, int offset, int n, int flags) {
    return REAL(f)->pMethods->xShmLock(REAL(f), offset, n, flags);
}
static void ra_shm_barrier(sqlite3_file *f) { REAL(f)->pMethods->xShmBarrier(REAL(f)); }
static int ra_shm_unmap(sqlite3_file *f, int del) { return REAL(f)->pMethods->xShmUnmap(REAL(f), del); }
static int ra_fetch(sqlite3_file *f, sqlite3_int64 off, int amt, void **pp) {
    /* No memory-mapped pages: every page goes through ra_read. */
    (void)f; (void)off; (void)amt;
    *pp = 0;
    return SQLITE_OK;
}
static int ra_unfetch(sqlite3_file *f, sqlite3_int64 off, void *page) { (void)f; (void)off; (void)page; return SQLITE_OK; }

static const sqlite3_io_methods ra_methods = {
    3, ra_close, ra_read, ra_write, ra_truncate, ra_sync, ra_file_size, ra_lock, ra_unlock,
    ra_check_reserved, ra_file_control, ra_sector_size, ra_device,
    ra_shm_map, ra_shm_lock, ra_shm_barrier, ra_shm_unmap, ra_fetch, ra_unfetch,
};

static int ra_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags, int *out_flags) {
    (void)vfs;
    RaFile *p = (RaFile *)f;
    if (!(flags & SQLITE_OPEN_MAIN_DB) || !(flags & SQLITE_OPEN_READONLY)) {
        /* Not ours to buffer: the default VFS's file fills this memory itself
         * (it is at least as large as that file needs). */
        return base_vfs->xOpen(base_vfs, name, f, flags, out_flags);
    }
    memset(p, 0, sizeof(RaFile));
    p->real = (sqlite3_file *)&p[1];
    int rc = base_vfs->xOpen(base_vfs, name, p->real, flags, out_flags);
    if (rc != SQLITE_OK) {
        p->base.pMethods = NULL;  /* SQLite then does not call xClose */
        return rc;
    }
    p->buf = sqlite3_malloc(CHUNK);
    if (p->buf == NULL || p->real->pMethods->xFileSize(p->real, &p->size) != SQLITE_OK) {
        p->real->pMethods->xClose(p->real);
        sqlite3_free(p->buf);
        p->buf = NULL;
        p->base.pMethods = NULL;
        return SQLITE_NOMEM;
    }
    p->last_end = -1;
    p->base.pMethods = &ra_methods;
    return SQLITE_OK;
}

static int ra_delete(sqlite3_vfs *v, const char *n, int s) { (void)v; return base_vfs->xDelete(base_vfs, n, s); }
static int ra_access(sqlite3_vfs *v, const char *n, int fl, int *out) { (void)v; return base_vfs->xAccess(base_vfs, n, fl, out); }
static int ra_full_path(sqlite3_vfs *v, const char *n, int len, char *out) { (void)v; return base_vfs->xFullPathname(base_vfs, n, len, out); }
static void *ra_dl_open(sqlite3_vfs *v, const char *n) { (void)v; return base_vfs->xDlOpen(base_vfs, n); }
static void ra_dl_error(sqlite3_vfs *v, int n, char *msg) { (void)v; base_vfs->xDlError(base_vfs, n, msg); }
static void (*ra_dl_sym(sqlite3_vfs *v, void *h, const char *s))(void) { (void)v; return base_vfs->xDlSym(base_vfs, h, s); }
static void ra_dl_close(sqlite3_vfs *v, void *h) { (void)v; base_vfs->xDlClose(base_vfs, h); }
static int ra_randomness(sqlite3_vfs *v, int n, char *out) { (void)v; return base_vfs->xRandomness(base_vfs, n, out); }
static int ra_sleep(sqlite3_vfs *v, int us) { (void)v; return base_vfs->xSleep(base_vfs, us); }
static int ra_current_time(sqlite3_vfs *v, double *out) { (void)v; return base_vfs->xCurrentTime(base_vfs, out); }
static int ra_last_error(sqlite3_vfs *v, int n, char *out) { (void)v; return base_vfs->xGetLastError(base_vfs, n, out); }
static int ra_current_time64(sqlite3_vfs *v, sqlite3_int64 *out) { (void)v; return base_vfs->xCurrentTimeInt64(base_vfs, out); }

static int register_vfs(void) {
    if (sqlite3_vfs_find(VFS_NAME) != NULL) return SQLITE_OK;
    base_vfs = sqlite3_vfs_find(NULL);
    /* Only over a VFS whose files have every method we forward (unix has). */
    if (base_vfs == NULL || base_vfs->iVersion < 2 || base_vfs->xCurrentTimeInt64 == NULL) return SQLITE_ERROR;
    memset(&ra_vfs, 0, sizeof ra_vfs);
    ra_vfs.iVersion = 2;
    ra_vfs.szOsFile = (int)sizeof(RaFile) + base_vfs->szOsFile;
    ra_vfs.mxPathname = base_vfs->mxPathname;
    ra_vfs.zName = VFS_NAME;
    ra_vfs.xOpen = ra_open;
    ra_vfs.xDelete = ra_delete;
    ra_vfs.xAccess = ra_access;
    ra_vfs.xFullPathname = ra_full_path;
    ra_vfs.xDlOpen = ra_dl_open;
    ra_vfs.xDlError = ra_dl_error;
    ra_vfs.xDlSym = ra_dl_sym;
    ra_vfs.xDlClose = ra_dl_close;
    ra_vfs.xRandomness = ra_randomness;
    ra_vfs.xSleep = ra_sleep;
    ra_vfs.xCurrentTime = ra_current_time;
    ra_vfs.xGetLastError = ra_last_error;
    ra_vfs.xCurrentTimeInt64 = ra_current_time64;
    return sqlite3_vfs_register(&ra_vfs, 0);
}

static PyObject *stats(PyObject *self, PyObject *unused) {
    (void)self; (void)unused;
    return Py_BuildValue("(KK)", served, passed);
}

static PyMethodDef methods[] = {
    {"stats", stats, METH_NOARGS, "stats() -> (reads served from a buffer, reads that went to the file), in this process."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "loaders._readahead",
    "Registers the read-ahead SQLite VFS (see _readahead.c); VFS_NAME names it.", -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__readahead(void) {
    if (register_vfs() != SQLITE_OK) {
        PyErr_SetString(PyExc_ImportError, "the read-ahead SQLite VFS could not be registered");
        return NULL;
    }
    PyObject *m = PyModule_Create(&module);
    if (m != NULL && PyModule_AddStringConstant(m, "VFS_NAME", VFS_NAME) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
