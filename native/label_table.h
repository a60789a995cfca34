/*
 * mlsql's per-label table: for one group of rows, each label's tp (rows whose
 * two sets both hold it), n_actual (rows whose actual set holds it) and
 * n_predicted, plus a histogram of the rows' own (|A ∩ P|, |A|, |P|) and the
 * number of unknown rows (a NULL list). Header-only (every function static),
 * shared by the DuckDB extension and the Polars plugin, engine-neutral: the
 * caller hands over each row's labels as mlsql_key arrays.
 *
 * Semantics (mlsql DESIGN s.1): a label repeated inside one list counts once;
 * the caller drops NULL elements and reports NULL lists with
 * mlsql_lt_add_unknown. Text labels are equal when their bytes are; integer
 * labels when their 128-bit values are (text keys are made with mlsql_text_key;
 * the caller widens every integer type
 * the same way for both sides: sign-extended for signed types, zero-extended
 * for unsigned ones).
 *
 * A table owns copies of its text labels (an arena), so the rows may go once
 * added. Tables merge (mlsql_lt_merge) for parallel engines. Every function
 * returning int gives 0, or -1 when memory ran out (the table stays valid).
 */
#ifndef MLSQL_LABEL_TABLE_H
#define MLSQL_LABEL_TABLE_H

#include "kernel.h"

typedef struct {
    const char *ptr; /* text: len bytes (NULL ptr with len 0: the empty label) */
    size_t len;
    uint64_t lo, hi; /* integers: the 128-bit value; text: lo holds the first 8 bytes */
} mlsql_key;

/* The key of a text label: its bytes, and the first (up to) 8 of them zero-padded in lo, so
 * that most comparisons of short labels need no call to memcmp. */
static inline mlsql_key mlsql_text_key(const char *ptr, size_t len) {
    mlsql_key k = {ptr, len, mlsql_head8(ptr, len), 0};
    return k;
}

/* mlsql_text_key where 8 bytes may be read at ptr (see mlsql_head8_padded in kernel.h). */
static inline mlsql_key mlsql_text_key_padded(const char *ptr, size_t len) {
    mlsql_key k = {ptr, len, mlsql_head8_padded(ptr, len), 0};
    return k;
}

typedef struct {
    mlsql_key key; /* text: ptr points into the table's arena */
    uint64_t hash;
    int64_t tp, n_actual, n_predicted;
    int used;
} mlsql_label_slot;

typedef struct {
    int64_t tp, n_actual, n_predicted, n;
    int used;
} mlsql_row_slot;

typedef struct mlsql_arena_block {
    struct mlsql_arena_block *next;
    size_t used, cap;
    char data[];
} mlsql_arena_block;

typedef struct {
    int text;                 /* labels are text (else integers) */
    mlsql_label_slot *labels; /* open addressing, a power of two slots */
    size_t label_cap, n_labels;
    mlsql_row_slot *rows; /* the row histogram, keyed by (tp, n_actual, n_predicted) */
    size_t row_cap, n_row_kinds;
    int64_t unknown; /* rows with a NULL list */
    mlsql_arena_block *arena;
} mlsql_label_table;

static MLSQL_UNUSED void mlsql_lt_init(mlsql_label_table *t, int text) {
    memset(t, 0, sizeof *t);
    t->text = text;
}

static MLSQL_UNUSED void mlsql_lt_free(mlsql_label_table *t) {
    free(t->labels);
    free(t->rows);
    while (t->arena) {
        mlsql_arena_block *next = t->arena->next;
        free(t->arena);
        t->arena = next;
    }
    memset(t, 0, sizeof *t);
}

static inline uint64_t mlsql_key_hash(int text, const mlsql_key *k) {
    if (text && k->len <= 8) return mlsql_mix64(k->lo ^ ((uint64_t)k->len << 56) ^ UINT64_C(0x9e3779b97f4a7c15));
    if (text) return mlsql_hash_bytes(k->ptr, k->len);
    return mlsql_mix64(k->lo ^ mlsql_mix64(k->hi ^ UINT64_C(0x2545f4914f6cdd1d)));
}

static inline int mlsql_key_eq(int text, const mlsql_key *x, const mlsql_key *y) {
    if (text)
        return x->len == y->len && x->lo == y->lo &&
               (x->len <= 8 || memcmp(x->ptr + 8, y->ptr + 8, x->len - 8) == 0);
    return x->lo == y->lo && x->hi == y->hi;
}

/* A copy of len bytes in the table's arena; NULL when out of memory. */
static const char *mlsql_arena_copy(mlsql_label_table *t, const char *p, size_t len) {
    if (len == 0) return NULL;
    mlsql_arena_block *b = t->arena;
    if (!b || b->cap - b->used < len) {
        size_t cap = len > 65536 ? len : 65536;
        if (cap > SIZE_MAX - sizeof *b) return NULL;
        b = (mlsql_arena_block *)malloc(sizeof *b + cap);
        if (!b) return NULL;
        b->next = t->arena;
        b->used = 0;
        b->cap = cap;
        t->arena = b;
    }
    char *out = b->data + b->used;
    memcpy(out, p, len);
    b->used += len;
    return out;
}

/* Grow the label table to hold one more label at load <= 1/2. */
static int mlsql_lt_grow_labels(mlsql_label_table *t) {
    if ((t->n_labels + 1) * 2 <= t->label_cap) return 0;
    size_t cap = t->label_cap ? t->label_cap * 2 : 64;
    if (cap > SIZE_MAX / sizeof(mlsql_label_slot) || cap < t->label_cap) return -1;
    mlsql_label_slot *s = (mlsql_label_slot *)calloc(cap, sizeof *s);
    if (!s) return -1;
    for (size_t i = 0; i < t->label_cap; i++) {
        if (!t->labels[i].used) continue;
        size_t h = (size_t)t->labels[i].hash & (cap - 1);
        while (s[h].used) h = (h + 1) & (cap - 1);
        s[h] = t->labels[i];
    }
    free(t->labels);
    t->labels = s;
    t->label_cap = cap;
    return 0;
}

/* The slot of label k (hash h), inserted with zero counts if new; NULL when out of memory. */
static mlsql_label_slot *mlsql_lt_slot(mlsql_label_table *t, const mlsql_key *k, uint64_t h) {
    if (t->label_cap) {
        size_t mask = t->label_cap - 1, i = (size_t)h & mask;
        while (t->labels[i].used) {
            if (t->labels[i].hash == h && mlsql_key_eq(t->text, &t->labels[i].key, k))
                return &t->labels[i];
            i = (i + 1) & mask;
        }
    }
    if (mlsql_lt_grow_labels(t) != 0) return NULL;
    mlsql_key stored = *k;
    if (t->text) {
        stored.ptr = mlsql_arena_copy(t, k->ptr, k->len);
        if (k->len && !stored.ptr) return NULL;
    }
    size_t mask = t->label_cap - 1, i = (size_t)h & mask;
    while (t->labels[i].used) i = (i + 1) & mask;
    mlsql_label_slot *s = &t->labels[i];
    memset(s, 0, sizeof *s);
    s->key = stored;
    s->hash = h;
    s->used = 1;
    t->n_labels++;
    return s;
}

/* Add n rows of statistics (tp, n_actual, n_predicted) to the histogram. */
static int mlsql_lt_add_rows(mlsql_label_table *t, int64_t tp, int64_t na, int64_t np, int64_t n) {
    if ((t->n_row_kinds + 1) * 2 > t->row_cap) {
        size_t cap = t->row_cap ? t->row_cap * 2 : 64;
        if (cap > SIZE_MAX / sizeof(mlsql_row_slot) || cap < t->row_cap) return -1;
        mlsql_row_slot *s = (mlsql_row_slot *)calloc(cap, sizeof *s);
        if (!s) return -1;
        for (size_t i = 0; i < t->row_cap; i++) {
            mlsql_row_slot *r = &t->rows[i];
            if (!r->used) continue;
            uint64_t hv = mlsql_mix64((uint64_t)r->tp ^ mlsql_mix64((uint64_t)r->n_actual ^
                                                                    mlsql_mix64((uint64_t)r->n_predicted)));
            size_t h = (size_t)hv & (cap - 1);
            while (s[h].used) h = (h + 1) & (cap - 1);
            s[h] = *r;
        }
        free(t->rows);
        t->rows = s;
        t->row_cap = cap;
    }
    uint64_t hv =
        mlsql_mix64((uint64_t)tp ^ mlsql_mix64((uint64_t)na ^ mlsql_mix64((uint64_t)np)));
    size_t mask = t->row_cap - 1, i = (size_t)hv & mask;
    while (t->rows[i].used) {
        mlsql_row_slot *r = &t->rows[i];
        if (r->tp == tp && r->n_actual == na && r->n_predicted == np) {
            r->n += n;
            return 0;
        }
        i = (i + 1) & mask;
    }
    mlsql_row_slot *r = &t->rows[i];
    r->tp = tp;
    r->n_actual = na;
    r->n_predicted = np;
    r->n = n;
    r->used = 1;
    t->n_row_kinds++;
    return 0;
}

static MLSQL_UNUSED void mlsql_lt_add_unknown(mlsql_label_table *t, int64_t n) { t->unknown += n; }

typedef struct {
    const mlsql_key *key;
    uint64_t hash;
    uint32_t flags; /* MLSQL_IN_A | MLSQL_IN_P; 0: empty slot */
} mlsql_row_key_slot;

/* One known row: a[0..na) and p[0..np) (NULL elements already dropped). */
static MLSQL_UNUSED int mlsql_lt_add_row(mlsql_label_table *t, const mlsql_key *a, size_t na,
                                         const mlsql_key *p, size_t np, mlsql_scratch *s) {
    int text = t->text;
    int64_t tp = 0, n_a = 0, n_p = 0;
    if (na + np <= MLSQL_PAIRWISE_MAX && na + np >= na) {
        for (size_t i = 0; i < na; i++) {
            size_t j = 0;
            while (j < i && !mlsql_key_eq(text, &a[j], &a[i])) j++;
            if (j < i) continue; /* seen before in A */
            int in_p = 0;
            for (size_t k = 0; k < np && !in_p; k++) in_p = mlsql_key_eq(text, &p[k], &a[i]);
            mlsql_label_slot *slot = mlsql_lt_slot(t, &a[i], mlsql_key_hash(text, &a[i]));
            if (!slot) return -1;
            slot->n_actual++;
            slot->tp += in_p;
            n_a++;
            tp += in_p;
        }
        for (size_t i = 0; i < np; i++) {
            size_t j = 0;
            while (j < i && !mlsql_key_eq(text, &p[j], &p[i])) j++;
            if (j < i) continue;
            mlsql_label_slot *slot = mlsql_lt_slot(t, &p[i], mlsql_key_hash(text, &p[i]));
            if (!slot) return -1;
            slot->n_predicted++;
            n_p++;
        }
        return mlsql_lt_add_rows(t, tp, n_a, n_p, 1);
    }
    if (na > SIZE_MAX - np) return -1;
    size_t slots = mlsql_table_slots(na + np, sizeof(mlsql_row_key_slot));
    if (!slots || mlsql_scratch_reserve(s, slots * sizeof(mlsql_row_key_slot)) != 0) return -1;
    mlsql_row_key_slot *r = (mlsql_row_key_slot *)s->buf;
    memset(r, 0, slots * sizeof *r);
    size_t mask = slots - 1;
    for (size_t side = 0; side < 2; side++) {
        const mlsql_key *x = side ? p : a;
        size_t n = side ? np : na;
        uint32_t flag = side ? MLSQL_IN_P : MLSQL_IN_A;
        for (size_t i = 0; i < n; i++) {
            uint64_t hv = mlsql_key_hash(text, &x[i]);
            size_t h = (size_t)hv & mask;
            while (r[h].flags && !(r[h].hash == hv && mlsql_key_eq(text, r[h].key, &x[i])))
                h = (h + 1) & mask;
            if (!r[h].flags) {
                r[h].key = &x[i];
                r[h].hash = hv;
            }
            r[h].flags |= flag;
        }
    }
    for (size_t h = 0; h < slots; h++) {
        if (!r[h].flags) continue;
        mlsql_label_slot *slot = mlsql_lt_slot(t, r[h].key, r[h].hash);
        if (!slot) return -1;
        int in_a = (r[h].flags & MLSQL_IN_A) != 0, in_p = (r[h].flags & MLSQL_IN_P) != 0;
        slot->n_actual += in_a;
        slot->n_predicted += in_p;
        slot->tp += in_a && in_p;
        n_a += in_a;
        n_p += in_p;
        tp += in_a && in_p;
    }
    return mlsql_lt_add_rows(t, tp, n_a, n_p, 1);
}

/* Add everything src counted to dst (src is left as it was). */
static MLSQL_UNUSED int mlsql_lt_merge(mlsql_label_table *dst, const mlsql_label_table *src) {
    for (size_t i = 0; i < src->label_cap; i++) {
        const mlsql_label_slot *x = &src->labels[i];
        if (!x->used) continue;
        mlsql_label_slot *slot = mlsql_lt_slot(dst, &x->key, x->hash);
        if (!slot) return -1;
        slot->tp += x->tp;
        slot->n_actual += x->n_actual;
        slot->n_predicted += x->n_predicted;
    }
    for (size_t i = 0; i < src->row_cap; i++) {
        const mlsql_row_slot *r = &src->rows[i];
        if (r->used && mlsql_lt_add_rows(dst, r->tp, r->n_actual, r->n_predicted, r->n) != 0)
            return -1;
    }
    dst->unknown += src->unknown;
    return 0;
}

/* Entries of the table's output: labels, then row kinds, then one for unknown rows if any. */
static MLSQL_UNUSED size_t mlsql_lt_entries(const mlsql_label_table *t) {
    return t->n_labels + t->n_row_kinds + (t->unknown > 0);
}

#endif /* MLSQL_LABEL_TABLE_H */
