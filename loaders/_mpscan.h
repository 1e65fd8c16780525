/* Transcript Lens: the msgpack checkpoint skeleton scanner behind `_scan.c`'s
 * `row` (one checkpoint row at a time for the Python reader). See `_scan.c` for what it promises: it
 * never decides on its own; every function answers "not sure" (-1) for input it
 * does not fully understand, and every read is bounds-checked.
 *
 * Include after <Python.h> (Py_ssize_t, PyMem_Malloc). */
#ifndef TRANSCRIPT_LENS_MPSCAN_H
#define TRANSCRIPT_LENS_MPSCAN_H
#include <stdint.h>
#include <string.h>

#define SCAN_MAX_DEPTH 64
#define EXT_PYDANTIC_V2 5

typedef struct {
    const unsigned char *p;
    const unsigned char *end;
    /* Values the scan may still read (`loaders/elements.py`: a checkpoint of more values than
     * the limit is not decoded), charged a container's entries at its header (`charge`): past it
     * the scan declines and Python reports the limit. */
    Py_ssize_t budget;
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
            /* ASCII runs eight bytes at a time (most text is ASCII) */
            while (i + 8 <= n) {
                uint64_t w;
                memcpy(&w, s + i, 8);
                if (w & 0x8080808080808080ULL) break;
                i += 8;
            }
            if (i < n && s[i] < 0x80) i++;
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

/* Read one value's header; str, bin and ext bodies are consumed and bounds-checked;
 * str bodies are checked to be UTF-8 unless `trusted` (bytes already checked). */
static int head_of(Cursor *c, Head *h, int trusted);
static int head(Cursor *c, Head *h) { return head_of(c, h, 0); }

static int head_of(Cursor *c, Head *h, int trusted) {
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
    return trusted || utf8_ok(h->data, (Py_ssize_t)n) ? 0 : -1;
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

/* Charge the values a container holds (an array's entries, a map's keys and values) to the
 * cursor's budget; -1 past it. Its count is already checked against the bytes left. */
static int charge(Cursor *c, const Head *h) {
    c->budget -= (Py_ssize_t)(h->kind == K_MAP ? 2 * h->n : h->n);
    return c->budget < 0 ? -1 : 0;
}

static int skip_body(Cursor *c, const Head *h, int depth) {
    if (h->kind == K_ARRAY) {
        /* Each entry takes at least one byte: a count beyond what is left is malformed. */
        if (h->n > (uint64_t)(c->end - c->p) || charge(c, h) < 0) return -1;
        for (uint64_t i = 0; i < h->n; i++)
            if (skip(c, depth + 1) < 0) return -1;
    } else if (h->kind == K_MAP) {
        if (h->n > (uint64_t)(c->end - c->p) || charge(c, h) < 0) return -1;
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
    if (h.n > (uint64_t)(c->end - c->p) || charge(c, &h) < 0) return -1;
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
    if (h.n > (uint64_t)(c->end - c->p) || charge(c, &h) < 0) return -1;
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
static int scan_checkpoint(const unsigned char *base, Py_ssize_t size, Py_ssize_t max_elements, Found *f) {
    Cursor c = {base, base + size, max_elements - 1};  /* (the checkpoint's map itself) */
    Head h;
    if (head(&c, &h) < 0 || h.kind != K_MAP) return -1;
    if (h.n > (uint64_t)(c.end - c.p) || charge(&c, &h) < 0) return -1;
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
static inline int utc_iso_micros(const unsigned char *s, Py_ssize_t n, int64_t *out) {
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


#endif
