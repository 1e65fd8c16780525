/* Transcript Lens: the trigram signature of many texts at once (the search index's hot path).
 *
 * A signature is 256 bits: bit `trigram_bit(a, b, c)` is set for every three consecutive code
 * points a, b, c of the text, and bit `trigram_bit(a, b, WIDE_PAIR)` for every two consecutive
 * code points a, b of which one is at least WIDE (CJK, kana, hangul: two characters make a word). `analytics/search_grams.py` says what the signature is for and
 * holds the pure-Python twin (`signature`), which gives the same bits for every text; the
 * tests compare the two on generated texts of many scripts.
 *
 * Input: an Arrow large-string column's two buffers (int64 offsets, n + 1 of them, and the
 * UTF-8 bytes). Output: n * 32 bytes, four native uint64 words per text, word w holding
 * bits 64w … 64w + 63. No Unicode table of its own: the caller lower-cases in DuckDB before
 * and passes the few further folds (`search_grams.FOLD`) as sorted (from, to) code point pairs. A byte that does not start a valid UTF-8 sequence counts as
 * one character of its own value (DuckDB hands over valid UTF-8 only).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define WIDE 0x2E80u  /* search_grams.WIDE */
#define WIDE_PAIR 0x110000u  /* above every code point: a pair's bit is no trigram's */

static inline unsigned trigram_bit(uint64_t a, uint64_t b, uint64_t c) {
    uint64_t h = a * 0x9E3779B97F4A7C15ULL + b * 0xC2B2AE3D27D4EB4FULL + c * 0x165667B19E3779F9ULL;
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ULL;
    h ^= h >> 32;
    return (unsigned)(h & 255);
}

/* The code point at p (end: one past the text), its length in *len. */
static inline uint32_t next_cp(const unsigned char *p, const unsigned char *end, int *len) {
    unsigned char b0 = p[0];
    int need = b0 < 0x80 ? 1 : (b0 & 0xE0) == 0xC0 ? 2 : (b0 & 0xF0) == 0xE0 ? 3 : (b0 & 0xF8) == 0xF0 ? 4 : 0;
    if (need <= 1 || end - p < need) {
        *len = 1;
        return b0;
    }
    uint32_t cp = b0 & (0x7F >> need);
    for (int i = 1; i < need; i++) {
        if ((p[i] & 0xC0) != 0x80) {
            *len = 1;
            return b0;
        }
        cp = (cp << 6) | (p[i] & 0x3F);
    }
    *len = need;
    return cp;
}

/* `cp` folded by the sorted (from, to) pairs. */
static inline uint32_t fold(uint32_t cp, const uint32_t *pairs, Py_ssize_t npairs) {
    if (npairs == 0 || cp < pairs[0]) return cp;
    Py_ssize_t lo = 0, hi = npairs;
    while (lo < hi) {
        Py_ssize_t mid = (lo + hi) / 2;
        if (pairs[2 * mid] < cp) lo = mid + 1;
        else hi = mid;
    }
    return lo < npairs && pairs[2 * lo] == cp ? pairs[2 * lo + 1] : cp;
}

PyDoc_STRVAR(signatures_doc,
"signatures(offsets, data, n, folds) -> bytes\n\n"
"The 256-bit trigram signature of each of the n texts of an Arrow large-string column\n"
"(its int64 offsets buffer and its data buffer), each character first folded by\n"
"`folds` (sorted native-endian uint32 (from, to) pairs): n * 32 bytes, four\n"
"native uint64 words per text.");

static PyObject *signatures(PyObject *self, PyObject *args) {
    Py_buffer offs, data, folds;
    Py_ssize_t n;
    if (!PyArg_ParseTuple(args, "y*y*ny*", &offs, &data, &n, &folds)) return NULL;
    PyObject *out = NULL;
    const uint32_t *pairs = folds.buf;
    Py_ssize_t npairs = folds.len / 8;
    if (n < 0 || offs.len < (Py_ssize_t)((n + 1) * sizeof(int64_t))) {
        PyErr_SetString(PyExc_ValueError, "signatures: offsets buffer too short for n texts");
        goto done;
    }
    out = PyBytes_FromStringAndSize(NULL, n * 32);
    if (out == NULL) goto done;
    uint64_t *words = (uint64_t *)PyBytes_AS_STRING(out);
    memset(words, 0, (size_t)n * 32);
    const int64_t *o = offs.buf;
    const unsigned char *base = data.buf;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (o[i] < 0 || o[i + 1] < o[i] || o[i + 1] > data.len) {
            Py_CLEAR(out);
            PyErr_SetString(PyExc_ValueError, "signatures: offsets outside the data buffer");
            goto done;
        }
    }
    Py_BEGIN_ALLOW_THREADS  /* (DuckDB may run the function on several threads) */
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t lo = o[i], hi = o[i + 1];
        const unsigned char *p = base + lo, *end = base + hi;
        uint64_t *w = words + 4 * i;
        uint32_t a = 0, b = 0;
        int have = 0, len;
        while (p < end) {
            uint32_t c = next_cp(p, end, &len);
            if (c >= 0x80) c = fold(c, pairs, npairs);
            p += len;
            if (have >= 2) {
                unsigned bit = trigram_bit(a, b, c);
                w[bit >> 6] |= 1ULL << (bit & 63);
            } else {
                have++;
            }
            if (have >= 2 && (b >= WIDE || c >= WIDE)) {
                unsigned bit = trigram_bit(b, c, WIDE_PAIR);
                w[bit >> 6] |= 1ULL << (bit & 63);
            }
            a = b;
            b = c;
        }
    }
    Py_END_ALLOW_THREADS
done:
    PyBuffer_Release(&offs);
    PyBuffer_Release(&data);
    PyBuffer_Release(&folds);
    return out;
}

static PyMethodDef methods[] = {
    {"signatures", signatures, METH_VARARGS, signatures_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "analytics._grams",
    "Trigram signatures of many texts (see _grams.c).", -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__grams(void) { return PyModule_Create(&module); }
