/* Transcript Lens: trigram signatures of many texts at once (the search index's hot loop).
 *
 * Included by _scan.c as `_scan.grams`. Byte-level work only: what the bits are for, and the
 * fold that makes them safe for a case-insensitive search, live in analytics/search_grams.py;
 * the pure-Python twin is loaders/grams.py (`grams_py`), which gives the same bytes for every
 * input (fuzz/ target `grams`, tests/loaders/test_grams.py).
 *
 * A signature is 256 bits: bit `trigram_bit(a, b, c)` for every three consecutive code points
 * a, b, c of the text (after the fold), and bit `trigram_bit(a, b, WIDE_PAIR)` for every two
 * consecutive code points of which one is at least WIDE (CJK, kana, hangul: two characters
 * make a word). A byte that does not start a well-formed sequence counts as one character of
 * its own value (DuckDB hands over valid UTF-8 only).
 */
#ifndef TL_GRAMS_H
#define TL_GRAMS_H

#include <Python.h>
#include <stdint.h>
#include <string.h>

#define GRAMS_WIDE 0x2E80u      /* loaders/grams.py WIDE */
#define GRAMS_PAIR 0x110000u    /* above every code point: a pair's bit is no trigram's */

static inline unsigned trigram_bit(uint64_t a, uint64_t b, uint64_t c) {
    uint64_t h = a * 0x9E3779B97F4A7C15ULL + b * 0xC2B2AE3D27D4EB4FULL + c * 0x165667B19E3779F9ULL;
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ULL;
    h ^= h >> 32;
    return (unsigned)(h & 255);
}

/* The code point at p (end: one past the text), its length in *len. */
static inline uint32_t grams_next_cp(const unsigned char *p, const unsigned char *end, int *len) {
    unsigned char b0 = p[0];
    int need = b0 < 0x80 ? 1 : (b0 & 0xE0) == 0xC0 ? 2 : (b0 & 0xF0) == 0xE0 ? 3 : (b0 & 0xF8) == 0xF0 ? 4 : 0;
    *len = 1;
    if (need <= 1 || end - p < need) return b0;
    uint32_t cp = b0 & (0x7F >> need);
    for (int i = 1; i < need; i++) {
        if ((p[i] & 0xC0) != 0x80) return b0;
        cp = (cp << 6) | (p[i] & 0x3F);
    }
    *len = need;
    return cp;
}

/* `cp` folded by the sorted (from, to) pairs. */
static inline uint32_t grams_fold(uint32_t cp, const uint32_t *pairs, Py_ssize_t npairs) {
    if (npairs == 0 || cp < pairs[0]) return cp;
    Py_ssize_t lo = 0, hi = npairs;
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if (pairs[2 * mid] < cp) lo = mid + 1;
        else hi = mid;
    }
    return lo < npairs && pairs[2 * lo] == cp ? pairs[2 * lo + 1] : cp;
}

static inline void grams_set(uint64_t *w, unsigned bit) { w[bit >> 6] |= 1ULL << (bit & 63); }

PyDoc_STRVAR(grams_doc,
"grams(offsets, data, n, width, folds) -> bytes\n\n"
"The 256-bit trigram signature of each of the n texts of an Arrow string column: its offsets\n"
"buffer (`width` 4 or 8 bytes an offset, n + 1 of them, native order) and its data buffer, each\n"
"character first folded by `folds` (sorted native uint32 (from, to) pairs). n * 32 bytes: four\n"
"native uint64 words a text, word w holding bits 64w ... 64w + 63.");

static PyObject *grams(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    Py_buffer offs = {0}, data = {0}, folds = {0};
    PyObject *out = NULL;
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "grams takes 5 arguments");
        return NULL;
    }
    Py_ssize_t n = PyLong_AsSsize_t(args[2]);
    long width = PyLong_AsLong(args[3]);
    if (PyErr_Occurred()) return NULL;
    if (PyObject_GetBuffer(args[0], &offs, PyBUF_SIMPLE) < 0) return NULL;
    if (PyObject_GetBuffer(args[1], &data, PyBUF_SIMPLE) < 0) goto done;
    if (PyObject_GetBuffer(args[4], &folds, PyBUF_SIMPLE) < 0) goto done;
    if ((width != 4 && width != 8) || n < 0 || n > (PY_SSIZE_T_MAX / 32) - 1 ||
        offs.len / width < n + 1 || folds.len % 8) {
        PyErr_SetString(PyExc_ValueError, "grams: bad width, n, offsets or folds");
        goto done;
    }
    const unsigned char *ob = offs.buf;
    int64_t prev = 0;
    for (Py_ssize_t i = 0; i <= n; i++) {  /* every offset inside the data, none going back */
        int64_t o;
        if (width == 4) { int32_t v; memcpy(&v, ob + 4 * i, 4); o = v; } else memcpy(&o, ob + 8 * i, 8);
        if (o < 0 || o > data.len || (i > 0 && o < prev)) {
            PyErr_SetString(PyExc_ValueError, "grams: offsets outside the data buffer");
            goto done;
        }
        prev = o;
    }
    out = PyBytes_FromStringAndSize(NULL, n * 32);
    if (out == NULL) goto done;
    uint64_t *words = (uint64_t *)PyBytes_AS_STRING(out);
    const unsigned char *base = data.buf;
    const uint32_t *pairs = folds.buf;
    Py_ssize_t npairs = folds.len / 8;
    Py_BEGIN_ALLOW_THREADS  /* (DuckDB may run the index's function on several threads) */
    memset(words, 0, (size_t)n * 32);
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t lo, hi;
        if (width == 4) {
            int32_t a, b;
            memcpy(&a, ob + 4 * i, 4);
            memcpy(&b, ob + 4 * (i + 1), 4);
            lo = a, hi = b;
        } else {
            memcpy(&lo, ob + 8 * i, 8);
            memcpy(&hi, ob + 8 * (i + 1), 8);
        }
        const unsigned char *p = base + lo, *end = base + hi;
        uint64_t *w = words + 4 * i;
        uint32_t a = 0, b = 0;
        int have = 0, len;
        while (p < end) {
            uint32_t c = grams_next_cp(p, end, &len);
            if (c >= 0x80) c = grams_fold(c, pairs, npairs);
            p += len;
            if (have == 2) grams_set(w, trigram_bit(a, b, c));
            if (have >= 1 && (b >= GRAMS_WIDE || c >= GRAMS_WIDE)) grams_set(w, trigram_bit(b, c, GRAMS_PAIR));
            if (have < 2) have++;
            a = b;
            b = c;
        }
    }
    Py_END_ALLOW_THREADS
done:
    if (offs.obj) PyBuffer_Release(&offs);
    if (data.obj) PyBuffer_Release(&data);
    if (folds.obj) PyBuffer_Release(&folds);
    return out;
}

#endif
