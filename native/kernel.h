/*
 * mlsql's set-count kernel: the sizes |A ∩ P|, |A| and |P| of two label lists
 * read as sets. Header-only (every function static) so that the DuckDB
 * extension and the Polars plugin each compile their own copy and share no
 * symbols.
 *
 * Semantics (mlsql DESIGN s.1): a label repeated inside one list counts once.
 * The caller drops NULL elements before the call and handles NULL lists
 * itself (a NULL list is an unknown row: no call, a NULL result).
 *
 * Text labels are equal when their bytes are equal (length and content).
 * Integer labels are compared as int64 values; a caller with unsigned 64-bit
 * labels may pass their bit patterns (equality is preserved), so every
 * integer width fits.
 *
 * Method: integer rows (and rows of two-word keys of labels up to 12 bytes) of at most
 * MLSQL_SMALL_MAX labels a side by straight-line code per (|A|, |P|) shape; other small lists (together at most
 * MLSQL_PAIRWISE_MAX items) by pairwise comparison in loops; longer ones by one
 * open-addressing hash table in the caller's
 * scratch buffer, so a row costs O(|A| + |P|) and no allocation once the
 * buffer has grown to the longest row. A NULL pointer with length 0 is an
 * empty list.
 */
#ifndef MLSQL_KERNEL_H
#define MLSQL_KERNEL_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *ptr;
    size_t len;
    uint64_t head; /* the first (up to) 8 bytes, zero-padded: make labels with mlsql_text_make */
} mlsql_text; /* one text label: len bytes at ptr (not NUL-terminated) */

/* The first (up to) 8 bytes at p, zero-padded, as one integer (injective for a given len).
 * Built in registers from loads of 4, 2 and 1 bytes: a byte-wise memcpy into a stack
 * variable that is then read as 8 bytes stalls store-to-load forwarding, which was three
 * quarters of the text gathering's time. */
static inline uint64_t mlsql_head8(const char *p, size_t len) {
    uint64_t w = 0;
    if (len >= 8) {
        memcpy(&w, p, 8);
        return w;
    }
    unsigned shift = 0;
    if (len & 4) {
        uint32_t x;
        memcpy(&x, p, 4);
        w = x;
        p += 4;
        shift = 32;
    }
    if (len & 2) {
        uint16_t x;
        memcpy(&x, p, 2);
        w |= (uint64_t)x << shift;
        p += 2;
        shift += 16;
    }
    if (len & 1) w |= (uint64_t)(unsigned char)*p << shift;
    return w;
}

/* mlsql_head8 for a caller that may read 8 bytes at p whatever len is (DuckDB's and Arrow's
 * 16-byte string views: an inlined label has 12 bytes of room, a longer one is longer than 8).
 * One load and a mask on little-endian machines; the same value as mlsql_head8. */
static inline uint64_t mlsql_head8_padded(const char *p, size_t len) {
#if (defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__) || defined(_M_X64) || \
    defined(_M_ARM64)
    uint64_t w;
    memcpy(&w, p, 8);
    return len >= 8 ? w : w & ((UINT64_C(1) << (8 * len)) - 1);
#else
    return mlsql_head8(p, len);
#endif
}

/* A text label; its head lets most comparisons of short labels skip memcmp (a call that
 * cost a fifth of micro_f1's time on labels of equal length). */
static inline mlsql_text mlsql_text_make(const char *ptr, size_t len) {
    mlsql_text t = {ptr, len, mlsql_head8(ptr, len)};
    return t;
}

/* mlsql_text_make where 8 bytes may be read at ptr (see mlsql_head8_padded). */
static inline mlsql_text mlsql_text_make_padded(const char *ptr, size_t len) {
    mlsql_text t = {ptr, len, mlsql_head8_padded(ptr, len)};
    return t;
}

/* Labels of at most MLSQL_SHORT_TEXT_MAX bytes as integers: the key of such a label is its
 * head with its length in the top byte, so two of them are equal exactly when the labels are
 * (the head's top byte is zero). A caller whose labels are all that short counts them with
 * mlsql_count_int on their keys: one comparison of two integers instead of mlsql_text_eq. */
#define MLSQL_SHORT_TEXT_MAX 7

/* The key of a label of len <= MLSQL_SHORT_TEXT_MAX bytes whose head is `head` (as
 * mlsql_head8 gives it). */
static inline int64_t mlsql_short_text_key(uint64_t head, size_t len) {
    return (int64_t)(head | ((uint64_t)len << 56));
}

/* Labels of at most MLSQL_MEDIUM_TEXT_MAX bytes (all of their bytes inlined in DuckDB's and
 * Arrow's 16-byte string views) as two words: the first 8 bytes, and the next 4 with the length
 * above them (zero-padded), so two keys are equal exactly when the labels are. Counted by
 * mlsql_count_key2: two integer comparisons per pair instead of mlsql_text_eq's branch. */
#define MLSQL_MEDIUM_TEXT_MAX 12

typedef struct {
    uint64_t lo, hi;
} mlsql_key2;

/* The key of a label of len <= MLSQL_MEDIUM_TEXT_MAX bytes at p, where 12 bytes may be read
 * (the inlined bytes of a string view). */
static inline mlsql_key2 mlsql_medium_text_key(const char *p, size_t len) {
    mlsql_key2 k;
    uint32_t tail;
    k.lo = mlsql_head8_padded(p, len);
    memcpy(&tail, p + 8, 4);
    tail = len > 8 ? tail & (uint32_t)((UINT64_C(1) << (8 * (len - 8))) - 1) : 0;
    k.hi = (uint64_t)tail | ((uint64_t)len << 32);
    return k;
}

static inline int mlsql_key2_eq(const mlsql_key2 *x, const mlsql_key2 *y) {
    return (x->lo == y->lo) & (x->hi == y->hi);
}

typedef struct {
    int64_t tp, n_actual, n_predicted;
} mlsql_counts; /* distinct sizes: |A ∩ P|, |A|, |P| */

typedef struct {
    void *buf;
    size_t cap;
} mlsql_scratch; /* caller-owned growable buffer; start as {0}, end with mlsql_scratch_free */

#ifndef MLSQL_PAIRWISE_MAX
#define MLSQL_PAIRWISE_MAX 16
#endif

#if defined(__GNUC__) || defined(__clang__)
#define MLSQL_UNUSED __attribute__((unused))
#else
#define MLSQL_UNUSED
#endif

/* Free the scratch buffer and reset it to empty (safe to call twice). */
static MLSQL_UNUSED void mlsql_scratch_free(mlsql_scratch *s) {
    free(s->buf);
    s->buf = NULL;
    s->cap = 0;
}

/* Make s hold at least `bytes` bytes (contents not kept). 0 ok, -1 out of memory. */
static MLSQL_UNUSED int mlsql_scratch_reserve(mlsql_scratch *s, size_t bytes) {
    if (bytes <= s->cap) return 0;
    size_t cap = s->cap ? s->cap : 256;
    while (cap < bytes) {
        if (cap > SIZE_MAX / 2) {
            cap = bytes;
            break;
        }
        cap *= 2;
    }
    void *buf = malloc(cap);
    if (!buf) return -1;
    free(s->buf);
    s->buf = buf;
    s->cap = cap;
    return 0;
}

/* Hash table slots for n items: a power of two >= 2n (load <= 1/2). 0 on overflow. */
static MLSQL_UNUSED size_t mlsql_table_slots(size_t n, size_t slot_bytes) {
    size_t slots = 16;
    while (slots < n || slots - n < n) {
        if (slots > SIZE_MAX / 2) return 0;
        slots *= 2;
    }
    if (slots > SIZE_MAX / slot_bytes) return 0;
    return slots;
}

static inline uint64_t mlsql_mix64(uint64_t x) { /* splitmix64's finalizer */
    x ^= x >> 30;
    x *= UINT64_C(0xbf58476d1ce4e5b9);
    x ^= x >> 27;
    x *= UINT64_C(0x94d049bb133111eb);
    x ^= x >> 31;
    return x;
}

static inline uint64_t mlsql_hash_bytes(const char *p, size_t len) {
    uint64_t h = UINT64_C(0x9e3779b97f4a7c15) ^ (uint64_t)len;
    while (len >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        h = mlsql_mix64(h ^ w);
        p += 8;
        len -= 8;
    }
    if (len) {
        uint64_t w = 0;
        memcpy(&w, p, len);
        h = mlsql_mix64(h ^ w ^ UINT64_C(0x632be59bd9b4e019));
    }
    return h;
}

#if defined(__GNUC__) || defined(__clang__)
#define MLSQL_RARELY(x) __builtin_expect(!!(x), 0)
#else
#define MLSQL_RARELY(x) (x)
#endif

/* Equal labels. Length and head are compared without a branch; the one branch left (to
 * compare the bytes after the head) is taken only for equal heads of labels longer than 8. */
static inline int mlsql_text_eq(const mlsql_text *x, const mlsql_text *y) {
    int same = (x->len == y->len) & (x->head == y->head);
    if (MLSQL_RARELY(same & (x->len > 8))) return memcmp(x->ptr + 8, y->ptr + 8, x->len - 8) == 0;
    return same;
}

/* ---------------------------------------------------------------- small rows
 *
 * Rows of at most MLSQL_SMALL_MAX labels a side (nearly all rows of real data) take one
 * straight-line function per (|A|, |P|) shape: a switch on the shape, then every comparison of
 * the row with no loop. The loops of the general pairwise method exit after a number of
 * iterations that changes from row to row, and those exits are mispredicted several times a
 * row; one indirect jump per row costs less (a kernel-only run on 3M rows of 1-5 integer labels
 * a side: 21 to 15 ns a row). */

#define MLSQL_SMALL_MAX 8 /* the switch below lists the shapes up to 8 x 8 */

#if defined(__GNUC__) || defined(__clang__)
#define MLSQL_ALWAYS_INLINE inline __attribute__((always_inline))
#define MLSQL_UNROLL _Pragma("GCC unroll 8")
#else
#define MLSQL_ALWAYS_INLINE inline
#define MLSQL_UNROLL
#endif

/* MLSQL_SMALL_COUNTS(name, T, EQ) defines name##_shape(a, p, NA, NP, out), the counts of NA and
 * NP labels of type T (NA, NP constants once inlined: the loops unroll completely), compared with
 * EQ(const T *, const T *); and name(a, na, p, np, out), which dispatches on the shape: 1 if it
 * counted, 0 if a side has more than MLSQL_SMALL_MAX labels (out untouched). */
#define MLSQL_SHAPE_CASE(name, x, y)                                                              \
    case (x) * 9 + (y):                                                                           \
        name##_shape(a, p, x, y, out);                                                            \
        return 1;
#define MLSQL_SHAPE_ROW(name, x)                                                                  \
    MLSQL_SHAPE_CASE(name, x, 0) MLSQL_SHAPE_CASE(name, x, 1) MLSQL_SHAPE_CASE(name, x, 2)       \
    MLSQL_SHAPE_CASE(name, x, 3) MLSQL_SHAPE_CASE(name, x, 4) MLSQL_SHAPE_CASE(name, x, 5)       \
    MLSQL_SHAPE_CASE(name, x, 6) MLSQL_SHAPE_CASE(name, x, 7) MLSQL_SHAPE_CASE(name, x, 8)
#define MLSQL_SMALL_COUNTS(name, T, EQ)                                                           \
    static MLSQL_ALWAYS_INLINE void name##_shape(const T *a, const T *p, const int NA,             \
                                                 const int NP, mlsql_counts *out) {               \
        int64_t tp = 0, n_a = 0, n_p = 0;                                                         \
        MLSQL_UNROLL for (int i = 0; i < NA; i++) {                                               \
            unsigned seen = 0, hit = 0;                                                           \
            MLSQL_UNROLL for (int j = 0; j < i; j++) seen |= (unsigned)EQ(&a[j], &a[i]);          \
            MLSQL_UNROLL for (int k = 0; k < NP; k++) hit |= (unsigned)EQ(&p[k], &a[i]);          \
            n_a += !seen;                                                                         \
            tp += hit & !seen;                                                                    \
        }                                                                                         \
        MLSQL_UNROLL for (int i = 0; i < NP; i++) {                                               \
            unsigned seen = 0;                                                                    \
            MLSQL_UNROLL for (int j = 0; j < i; j++) seen |= (unsigned)EQ(&p[j], &p[i]);          \
            n_p += !seen;                                                                         \
        }                                                                                         \
        out->tp = tp;                                                                             \
        out->n_actual = n_a;                                                                      \
        out->n_predicted = n_p;                                                                   \
    }                                                                                             \
    static MLSQL_UNUSED int name(const T *a, size_t na, const T *p, size_t np,                    \
                                 mlsql_counts *out) {                                             \
        if (na > MLSQL_SMALL_MAX || np > MLSQL_SMALL_MAX) return 0;                               \
        switch (na * 9 + np) {                                                                    \
            MLSQL_SHAPE_ROW(name, 0)                                                              \
            MLSQL_SHAPE_ROW(name, 1)                                                              \
            MLSQL_SHAPE_ROW(name, 2)                                                              \
            MLSQL_SHAPE_ROW(name, 3)                                                              \
            MLSQL_SHAPE_ROW(name, 4)                                                              \
            MLSQL_SHAPE_ROW(name, 5)                                                              \
            MLSQL_SHAPE_ROW(name, 6)                                                              \
            MLSQL_SHAPE_ROW(name, 7)                                                              \
            MLSQL_SHAPE_ROW(name, 8)                                                              \
        }                                                                                         \
        return 0;                                                                                 \
    }

static inline int mlsql_int_eq(const int64_t *x, const int64_t *y) { return *x == *y; }

/* Integers only: with text labels (mlsql_text_eq, a branch for long labels) the same code
 * measured slower than the loops of mlsql_count_text (10M rows of 11-byte labels in DuckDB:
 * 2.6x to 3.0x the scan). */
MLSQL_SMALL_COUNTS(mlsql_small_int, int64_t, mlsql_int_eq)

MLSQL_SMALL_COUNTS(mlsql_small_key2, mlsql_key2, mlsql_key2_eq)

/* ---------------------------------------------------------------- integers */

#define MLSQL_IN_A 1u
#define MLSQL_IN_P 2u

typedef struct {
    int64_t key;
    uint32_t flags; /* 0: empty slot; else MLSQL_IN_A | MLSQL_IN_P */
} mlsql_int_slot;

static MLSQL_UNUSED int mlsql_count_int(const int64_t *a, size_t na, const int64_t *p, size_t np,
                                        mlsql_scratch *s, mlsql_counts *out) {
    if (mlsql_small_int(a, na, p, np, out)) return 0;
    int64_t tp = 0, n_a = 0, n_p = 0;
    if (na + np <= MLSQL_PAIRWISE_MAX && na + np >= na) {
        /* every comparison of the row, no early exit: data-dependent branches (a label found
         * or not) cost more in mispredictions than the few comparisons they save */
        for (size_t i = 0; i < na; i++) {
            unsigned seen = 0, hit = 0;
            for (size_t j = 0; j < i; j++) seen |= a[j] == a[i];
            for (size_t k = 0; k < np; k++) hit |= p[k] == a[i];
            n_a += !seen;
            tp += hit & !seen;
        }
        for (size_t i = 0; i < np; i++) {
            unsigned seen = 0;
            for (size_t j = 0; j < i; j++) seen |= p[j] == p[i];
            n_p += !seen;
        }
    } else {
        if (na > SIZE_MAX - np) return -1;
        size_t slots = mlsql_table_slots(na + np, sizeof(mlsql_int_slot));
        if (!slots || mlsql_scratch_reserve(s, slots * sizeof(mlsql_int_slot)) != 0) return -1;
        mlsql_int_slot *t = (mlsql_int_slot *)s->buf;
        memset(t, 0, slots * sizeof *t);
        size_t mask = slots - 1;
        for (size_t i = 0; i < na; i++) {
            size_t h = (size_t)mlsql_mix64((uint64_t)a[i]) & mask;
            while (t[h].flags && t[h].key != a[i]) h = (h + 1) & mask;
            if (!t[h].flags) {
                t[h].key = a[i];
                t[h].flags = MLSQL_IN_A;
                n_a++;
            }
        }
        for (size_t i = 0; i < np; i++) {
            size_t h = (size_t)mlsql_mix64((uint64_t)p[i]) & mask;
            while (t[h].flags && t[h].key != p[i]) h = (h + 1) & mask;
            if (!t[h].flags) {
                t[h].key = p[i];
                t[h].flags = MLSQL_IN_P;
                n_p++;
            } else if (!(t[h].flags & MLSQL_IN_P)) {
                t[h].flags |= MLSQL_IN_P;
                n_p++;
                tp++; /* the slot was A's alone */
            }
        }
    }
    out->tp = tp;
    out->n_actual = n_a;
    out->n_predicted = n_p;
    return 0;
}

/* ---------------------------------------------------------------- medium text */

typedef struct {
    mlsql_key2 key;
    uint32_t flags; /* 0: empty slot; else MLSQL_IN_A | MLSQL_IN_P */
} mlsql_key2_slot;

static inline uint64_t mlsql_key2_hash(const mlsql_key2 *k) {
    return mlsql_mix64(k->lo ^ mlsql_mix64(k->hi));
}

/* mlsql_count_int for mlsql_key2 labels (mlsql_medium_text_key). */
static MLSQL_UNUSED int mlsql_count_key2(const mlsql_key2 *a, size_t na, const mlsql_key2 *p,
                                         size_t np, mlsql_scratch *s, mlsql_counts *out) {
    if (mlsql_small_key2(a, na, p, np, out)) return 0;
    int64_t tp = 0, n_a = 0, n_p = 0;
    if (na + np <= MLSQL_PAIRWISE_MAX && na + np >= na) {
        for (size_t i = 0; i < na; i++) { /* as in mlsql_count_int: no early exit */
            unsigned seen = 0, hit = 0;
            for (size_t j = 0; j < i; j++) seen |= (unsigned)mlsql_key2_eq(&a[j], &a[i]);
            for (size_t k = 0; k < np; k++) hit |= (unsigned)mlsql_key2_eq(&p[k], &a[i]);
            n_a += !seen;
            tp += hit & !seen;
        }
        for (size_t i = 0; i < np; i++) {
            unsigned seen = 0;
            for (size_t j = 0; j < i; j++) seen |= (unsigned)mlsql_key2_eq(&p[j], &p[i]);
            n_p += !seen;
        }
    } else {
        if (na > SIZE_MAX - np) return -1;
        size_t slots = mlsql_table_slots(na + np, sizeof(mlsql_key2_slot));
        if (!slots || mlsql_scratch_reserve(s, slots * sizeof(mlsql_key2_slot)) != 0) return -1;
        mlsql_key2_slot *t = (mlsql_key2_slot *)s->buf;
        memset(t, 0, slots * sizeof *t);
        size_t mask = slots - 1;
        for (size_t i = 0; i < na; i++) {
            size_t h = (size_t)mlsql_key2_hash(&a[i]) & mask;
            while (t[h].flags && !mlsql_key2_eq(&t[h].key, &a[i])) h = (h + 1) & mask;
            if (!t[h].flags) {
                t[h].key = a[i];
                t[h].flags = MLSQL_IN_A;
                n_a++;
            }
        }
        for (size_t i = 0; i < np; i++) {
            size_t h = (size_t)mlsql_key2_hash(&p[i]) & mask;
            while (t[h].flags && !mlsql_key2_eq(&t[h].key, &p[i])) h = (h + 1) & mask;
            if (!t[h].flags) {
                t[h].key = p[i];
                t[h].flags = MLSQL_IN_P;
                n_p++;
            } else if (!(t[h].flags & MLSQL_IN_P)) {
                t[h].flags |= MLSQL_IN_P;
                n_p++;
                tp++;
            }
        }
    }
    out->tp = tp;
    out->n_actual = n_a;
    out->n_predicted = n_p;
    return 0;
}

/* ---------------------------------------------------------------- text */

typedef struct {
    uint64_t hash;
    const mlsql_text *label; /* NULL: empty slot */
    uint32_t flags;
} mlsql_text_slot;

static MLSQL_UNUSED int mlsql_count_text(const mlsql_text *a, size_t na, const mlsql_text *p,
                                         size_t np, mlsql_scratch *s, mlsql_counts *out) {
    int64_t tp = 0, n_a = 0, n_p = 0;
    if (na + np <= MLSQL_PAIRWISE_MAX && na + np >= na) {
        for (size_t i = 0; i < na; i++) { /* as in mlsql_count_int: no early exit */
            unsigned seen = 0, hit = 0;
            for (size_t j = 0; j < i; j++) seen |= (unsigned)mlsql_text_eq(&a[j], &a[i]);
            for (size_t k = 0; k < np; k++) hit |= (unsigned)mlsql_text_eq(&p[k], &a[i]);
            n_a += !seen;
            tp += hit & !seen;
        }
        for (size_t i = 0; i < np; i++) {
            unsigned seen = 0;
            for (size_t j = 0; j < i; j++) seen |= (unsigned)mlsql_text_eq(&p[j], &p[i]);
            n_p += !seen;
        }
    } else {
        if (na > SIZE_MAX - np) return -1;
        size_t slots = mlsql_table_slots(na + np, sizeof(mlsql_text_slot));
        if (!slots || mlsql_scratch_reserve(s, slots * sizeof(mlsql_text_slot)) != 0) return -1;
        mlsql_text_slot *t = (mlsql_text_slot *)s->buf;
        memset(t, 0, slots * sizeof *t);
        size_t mask = slots - 1;
        for (size_t i = 0; i < na; i++) {
            uint64_t hv = mlsql_hash_bytes(a[i].ptr, a[i].len);
            size_t h = (size_t)hv & mask;
            while (t[h].label && !(t[h].hash == hv && mlsql_text_eq(t[h].label, &a[i])))
                h = (h + 1) & mask;
            if (!t[h].label) {
                t[h].hash = hv;
                t[h].label = &a[i];
                t[h].flags = MLSQL_IN_A;
                n_a++;
            }
        }
        for (size_t i = 0; i < np; i++) {
            uint64_t hv = mlsql_hash_bytes(p[i].ptr, p[i].len);
            size_t h = (size_t)hv & mask;
            while (t[h].label && !(t[h].hash == hv && mlsql_text_eq(t[h].label, &p[i])))
                h = (h + 1) & mask;
            if (!t[h].label) {
                t[h].hash = hv;
                t[h].label = &p[i];
                t[h].flags = MLSQL_IN_P;
                n_p++;
            } else if (!(t[h].flags & MLSQL_IN_P)) {
                t[h].flags |= MLSQL_IN_P;
                n_p++;
                tp++;
            }
        }
    }
    out->tp = tp;
    out->n_actual = n_a;
    out->n_predicted = n_p;
    return 0;
}

#endif /* MLSQL_KERNEL_H */
