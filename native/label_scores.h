/*
 * mlsql's label-score table: for one group of rows of (true labels, label scores, weight),
 * what scikit-learn's multi-label average_precision_score and roc_auc_score need, as the
 * segment statistics of mlsql.measures.label_scores.Segment (n_explicit, n_positive,
 * n_positive_unscored, precision_sum, u) per segment, plus the group's distinct labels.
 * Header-only (every function static), engine-neutral: the caller hands over each row's
 * labels as mlsql_key arrays (native/label_table.h) and its scores as doubles. Callers: the
 * DuckDB extension's aggregate mlsql_native_label_scores and the Polars plugin's
 * label_scores_pool, _labels and _rows (one call per group, which merges nothing).
 *
 * Cells (mlsql DESIGN s.1.5, the portable macros of sql/label_scores.sql): a row's explicit
 * cells are its scored labels (a label's first entry in the row's scores; a NULL label or a
 * NULL score is no score) and its true labels without a score, at -infinity. A cell is
 * positive when its label is true in the row (a label repeated in the true list counts once).
 *
 * Modes (one per state, fixed by its first row):
 *   MLSQL_LS_POOL    one segment of every cell (micro): a table of (score) -> weights
 *   MLSQL_LS_LABELS  one segment per label (macro, weighted): (label, score) -> weights
 *   MLSQL_LS_ROWS    one segment per row (samples): each row's statistics computed when
 *                    the row is added, summed per number of positives of the row
 *   MLSQL_LS_CELLS   LABELS' table, its true labels without a score at MLSQL_UNSCORED_KEY
 *                    (below every score) instead of -infinity: the cells themselves are the
 *                    output (mlsql_ls_emit_cells; curves and per-label thresholds)
 * In the first two modes a cell adds the row's weight to the positive or negative weight of
 * its (label, score) key: memory is linear in the group's distinct (label, score) cells (a
 * 32-byte slot each, the table 3/8 to 3/4 full: 43-85 bytes a cell; a merge sizes its target
 * for both tables first), plus per label its key and rows (48 bytes, text bytes in an arena, a 4-byte
 * index slot). ROWS keeps 56 bytes per
 * distinct (positives, unscored positives) of a row (plus an index slot), and the label set
 * (for the number of labels).
 *
 * Scores compare as DuckDB orders doubles: -0.0 equals 0.0, NaN equals NaN and is above
 * +infinity. Ties: the runs of equal scores are one threshold (average precision) and count
 * a (positive, negative) pair one half (U).
 *
 * Tables merge (mlsql_ls_merge) for parallel engines. Every function returning int gives 0,
 * or -1 when memory ran out (the table stays valid).
 */
#ifndef MLSQL_LABEL_SCORES_H
#define MLSQL_LABEL_SCORES_H

#include "label_table.h"

enum { MLSQL_LS_POOL = 0, MLSQL_LS_LABELS = 1, MLSQL_LS_ROWS = 2, MLSQL_LS_CELLS = 3 };

/* A score as an unsigned key ordered as DuckDB orders doubles (see above). */
static inline uint64_t mlsql_score_key(double x) {
    if (x != x) return UINT64_MAX; /* NaN: above everything, all NaNs equal */
    x += 0.0;                      /* -0.0 + 0.0 is +0.0 */
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return (b >> 63) ? ~b : (b | (UINT64_C(1) << 63));
}

/* The key of -infinity: the score of a true label without a score. */
#define MLSQL_NEG_INF_KEY (~UINT64_C(0xfff0000000000000))
/* CELLS mode's key of a true label without a score: below -infinity's, a key no score has
 * (the keys below -infinity's are negative NaNs, which mlsql_score_key maps to UINT64_MAX). */
#define MLSQL_UNSCORED_KEY (MLSQL_NEG_INF_KEY - 1)

/* The score of key k (mlsql_score_key's inverse on the keys it gives; NaN for NaN). */
static inline double mlsql_key_score(uint64_t k) {
    uint64_t b = (k >> 63) ? (k ^ (UINT64_C(1) << 63)) : ~k;
    double x;
    memcpy(&x, &b, sizeof x);
    return x;
}

typedef struct {
    uint64_t skey;  /* mlsql_score_key of the score */
    uint32_t label; /* the label's id (0 in POOL mode) */
    uint32_t used;
    double pos, neg; /* weights of the positive and negative cells of this key */
} mlsql_ls_cell;

typedef struct {
    double n_explicit, n_positive, n_positive_unscored, precision_sum, u;
} mlsql_ls_stats;

typedef struct {
    uint64_t np, npu_count; /* the rows' positives and unscored positives (ROWS mode) */
    int64_t rows;           /* how many rows */
    double w;               /* their weight */
    double ne, ps, u;       /* Σ weight x the row's statistic */
} mlsql_ls_rowseg;

typedef struct {
    mlsql_key key; /* text: ptr points into the arena */
    uint64_t hash;
    uint64_t rows; /* the rows with a cell of this label (a row has at most one) */
} mlsql_ls_label;

typedef struct {
    int text;
    int mode; /* -1 until the first row */
    /* labels: dense array by id, and an open-addressing index of id + 1 (0: empty) */
    mlsql_ls_label *labels;
    size_t n_labels, labels_cap;
    uint32_t *index;
    size_t index_cap;
    mlsql_label_table arena_owner; /* only its arena is used (mlsql_arena_copy) */
    /* cells: open addressing, a power of two slots; `sorted`: compacted by mlsql_ls_sort */
    mlsql_ls_cell *cells;
    size_t n_cells, cells_cap;
    int sorted;
    /* ROWS mode: by (positives, unscored positives), dense, and an index of id + 1 */
    mlsql_ls_rowseg *rowsegs;
    size_t n_rowsegs, rowsegs_cap;
    uint32_t *rowsegs_index;
    size_t rowsegs_index_cap;
} mlsql_ls_table;

static MLSQL_UNUSED void mlsql_ls_init(mlsql_ls_table *t, int text) {
    memset(t, 0, sizeof *t);
    t->text = text;
    t->mode = -1;
    mlsql_lt_init(&t->arena_owner, text);
}

static MLSQL_UNUSED void mlsql_ls_free(mlsql_ls_table *t) {
    free(t->labels);
    free(t->index);
    free(t->cells);
    free(t->rowsegs);
    free(t->rowsegs_index);
    mlsql_lt_free(&t->arena_owner);
    memset(t, 0, sizeof *t);
}

/* The id of label k (hash h), added if new; -1 when out of memory. */
static int64_t mlsql_ls_label_id(mlsql_ls_table *t, const mlsql_key *k, uint64_t h) {
    if (t->index_cap) {
        size_t mask = t->index_cap - 1, i = (size_t)h & mask;
        while (t->index[i]) {
            const mlsql_ls_label *x = &t->labels[t->index[i] - 1];
            if (x->hash == h && mlsql_key_eq(t->text, &x->key, k)) return t->index[i] - 1;
            i = (i + 1) & mask;
        }
    }
    if (t->n_labels >= UINT32_MAX - 1) return -1;
    if ((t->n_labels + 1) * 2 > t->index_cap) {
        size_t cap = t->index_cap ? t->index_cap * 2 : 64;
        if (cap > SIZE_MAX / sizeof(uint32_t) || cap < t->index_cap) return -1;
        uint32_t *ix = (uint32_t *)calloc(cap, sizeof *ix);
        if (!ix) return -1;
        for (size_t id = 0; id < t->n_labels; id++) {
            size_t j = (size_t)t->labels[id].hash & (cap - 1);
            while (ix[j]) j = (j + 1) & (cap - 1);
            ix[j] = (uint32_t)id + 1;
        }
        free(t->index);
        t->index = ix;
        t->index_cap = cap;
    }
    if (t->n_labels == t->labels_cap) {
        size_t cap = t->labels_cap ? t->labels_cap * 2 : 64;
        if (cap > SIZE_MAX / sizeof(mlsql_ls_label)) return -1;
        mlsql_ls_label *l = (mlsql_ls_label *)realloc(t->labels, cap * sizeof *l);
        if (!l) return -1;
        t->labels = l;
        t->labels_cap = cap;
    }
    mlsql_key stored = *k;
    if (t->text) {
        stored.ptr = mlsql_arena_copy(&t->arena_owner, k->ptr, k->len);
        if (k->len && !stored.ptr) return -1;
    }
    size_t id = t->n_labels++;
    t->labels[id].key = stored;
    t->labels[id].hash = h;
    t->labels[id].rows = 0;
    size_t mask = t->index_cap - 1, i = (size_t)h & mask;
    while (t->index[i]) i = (i + 1) & mask;
    t->index[i] = (uint32_t)id + 1;
    return (int64_t)id;
}

static inline uint64_t mlsql_ls_cell_hash(uint64_t skey, uint32_t label) {
    return mlsql_mix64(skey ^ mlsql_mix64((uint64_t)label ^ UINT64_C(0x2545f4914f6cdd1d)));
}

/* Rebuild the cell table at `cap` slots (a power of two) from its used cells. */
static int mlsql_ls_rehash(mlsql_ls_table *t, size_t cap) {
    if (cap > SIZE_MAX / sizeof(mlsql_ls_cell)) return -1;
    mlsql_ls_cell *s = (mlsql_ls_cell *)calloc(cap, sizeof *s);
    if (!s) return -1;
    for (size_t i = 0; i < t->cells_cap; i++) {
        const mlsql_ls_cell *c = &t->cells[i];
        if (!c->used) continue;
        size_t h = (size_t)mlsql_ls_cell_hash(c->skey, c->label) & (cap - 1);
        while (s[h].used) h = (h + 1) & (cap - 1);
        s[h] = *c;
    }
    free(t->cells);
    t->cells = s;
    t->cells_cap = cap;
    t->sorted = 0;
    return 0;
}

/* Make room for n cells at load <= 3/4 (linear probing stays short at that load, and the
 * table takes a third less memory than at 1/2). */
static int mlsql_ls_reserve(mlsql_ls_table *t, size_t n) {
    if (n > SIZE_MAX / 4) return -1;
    size_t cap = t->cells_cap ? t->cells_cap : 64;
    while (n * 4 > cap * 3) {
        if (cap > SIZE_MAX / 2) return -1;
        cap *= 2;
    }
    return cap == t->cells_cap ? 0 : mlsql_ls_rehash(t, cap);
}

/* Add weights (pos, neg) to the cell (label, skey). */
static int mlsql_ls_add_cell(mlsql_ls_table *t, uint32_t label, uint64_t skey, double pos,
                             double neg) {
    if (t->sorted && mlsql_ls_rehash(t, t->cells_cap) != 0) return -1;
    uint64_t hv = mlsql_ls_cell_hash(skey, label);
    if (t->cells_cap) {
        size_t mask = t->cells_cap - 1, i = (size_t)hv & mask;
        while (t->cells[i].used) {
            mlsql_ls_cell *c = &t->cells[i];
            if (c->skey == skey && c->label == label) {
                c->pos += pos;
                c->neg += neg;
                return 0;
            }
            i = (i + 1) & mask;
        }
    }
    if (mlsql_ls_reserve(t, t->n_cells + 1) != 0) return -1;
    size_t mask = t->cells_cap - 1, i = (size_t)hv & mask;
    while (t->cells[i].used) i = (i + 1) & mask;
    mlsql_ls_cell *c = &t->cells[i];
    c->skey = skey;
    c->label = label;
    c->used = 1;
    c->pos = pos;
    c->neg = neg;
    t->n_cells++;
    return 0;
}

/* The ROWS-mode entry of rows with np positives of which npu unscored; NULL when out of
 * memory. A row's value is linear in its other statistics (explicit cells, precision sum, U)
 * once these two and the number of labels are fixed, so their weighted means stand for the
 * rows of the entry (the product of explicit cells and unscored positives in U's formula is
 * why npu is part of the key). */
static mlsql_ls_rowseg *mlsql_ls_rowseg_at(mlsql_ls_table *t, uint64_t np, uint64_t npu) {
    if (np > UINT32_MAX || npu > UINT32_MAX) return NULL;
    uint64_t key = np << 32 | npu, hv = mlsql_mix64(key ^ UINT64_C(0x632be59bd9b4e019));
    if (t->rowsegs_index_cap) {
        size_t mask = t->rowsegs_index_cap - 1, i = (size_t)hv & mask;
        while (t->rowsegs_index[i]) {
            mlsql_ls_rowseg *g = &t->rowsegs[t->rowsegs_index[i] - 1];
            if (g->np == np && g->npu_count == npu) return g;
            i = (i + 1) & mask;
        }
    }
    if (t->n_rowsegs >= UINT32_MAX - 1) return NULL;
    if ((t->n_rowsegs + 1) * 2 > t->rowsegs_index_cap) {
        size_t cap = t->rowsegs_index_cap ? t->rowsegs_index_cap * 2 : 64;
        if (cap > SIZE_MAX / sizeof(uint32_t) || cap < t->rowsegs_index_cap) return NULL;
        uint32_t *ix = (uint32_t *)calloc(cap, sizeof *ix);
        if (!ix) return NULL;
        for (size_t id = 0; id < t->n_rowsegs; id++) {
            const mlsql_ls_rowseg *g = &t->rowsegs[id];
            uint64_t h = mlsql_mix64((g->np << 32 | g->npu_count) ^ UINT64_C(0x632be59bd9b4e019));
            size_t j = (size_t)h & (cap - 1);
            while (ix[j]) j = (j + 1) & (cap - 1);
            ix[j] = (uint32_t)id + 1;
        }
        free(t->rowsegs_index);
        t->rowsegs_index = ix;
        t->rowsegs_index_cap = cap;
    }
    if (t->n_rowsegs == t->rowsegs_cap) {
        size_t cap = t->rowsegs_cap ? t->rowsegs_cap * 2 : 16;
        if (cap > SIZE_MAX / sizeof(mlsql_ls_rowseg)) return NULL;
        mlsql_ls_rowseg *r = (mlsql_ls_rowseg *)realloc(t->rowsegs, cap * sizeof *r);
        if (!r) return NULL;
        t->rowsegs = r;
        t->rowsegs_cap = cap;
    }
    size_t id = t->n_rowsegs++;
    mlsql_ls_rowseg *g = &t->rowsegs[id];
    memset(g, 0, sizeof *g);
    g->np = np;
    g->npu_count = npu;
    size_t mask = t->rowsegs_index_cap - 1, i = (size_t)hv & mask;
    while (t->rowsegs_index[i]) i = (i + 1) & mask;
    t->rowsegs_index[i] = (uint32_t)id + 1;
    return g;
}

/* Cells sorted by score descending (a segment's cells); equal scores may repeat. */
static MLSQL_UNUSED void mlsql_ls_segment_stats(const mlsql_ls_cell *c, size_t n,
                                                mlsql_ls_stats *out) {
    double ne = 0, np = 0, npu = 0, cum_n = 0, cum_p = 0, ps = 0;
    for (size_t i = 0; i < n;) { /* from the highest score: precision at each run */
        size_t j = i;
        double rp = 0, rn = 0;
        while (j < n && c[j].skey == c[i].skey) {
            rp += c[j].pos;
            rn += c[j].neg;
            j++;
        }
        ne += rp + rn;
        np += rp;
        cum_n += rp + rn;
        cum_p += rp;
        if (c[i].skey == MLSQL_NEG_INF_KEY)
            npu += rp;
        else if (rp > 0)
            ps += rp * cum_p / cum_n;
        i = j;
    }
    double below = 0, u = 0;
    for (size_t i = n; i > 0;) { /* from the lowest score: negatives below, ties one half */
        size_t j = i;
        double rp = 0, rn = 0;
        while (j > 0 && c[j - 1].skey == c[i - 1].skey) {
            rp += c[j - 1].pos;
            rn += c[j - 1].neg;
            j--;
        }
        u += rp * (below + rn / 2);
        below += rn;
        i = j;
    }
    out->n_explicit = ne;
    out->n_positive = np;
    out->n_positive_unscored = npu;
    out->precision_sum = ps;
    out->u = u;
}

static int mlsql_ls_cmp_score(const void *x, const void *y) {
    const mlsql_ls_cell *a = (const mlsql_ls_cell *)x, *b = (const mlsql_ls_cell *)y;
    return a->skey < b->skey ? 1 : a->skey > b->skey ? -1 : 0;
}

static int mlsql_ls_cmp_label_score(const void *x, const void *y) {
    const mlsql_ls_cell *a = (const mlsql_ls_cell *)x, *b = (const mlsql_ls_cell *)y;
    if (a->label != b->label) return a->label < b->label ? -1 : 1;
    return mlsql_ls_cmp_score(x, y);
}

typedef struct {
    const mlsql_key *key;
    uint64_t hash;
    uint32_t flags; /* 0: empty slot */
    uint32_t at;    /* the score's index in the row (with MLSQL_LS_SCORED) */
} mlsql_ls_row_slot;

#define MLSQL_LS_TRUE 1u
#define MLSQL_LS_NAMED 2u  /* the label has an entry in the row's scores (the first counts) */
#define MLSQL_LS_SCORED 4u /* ... and its score is not NULL */

typedef struct {
    mlsql_scratch slots; /* the row's labels */
    mlsql_ls_cell *cells; /* ROWS mode: the row's cells */
    size_t cells_cap;
} mlsql_ls_scratch;

static MLSQL_UNUSED void mlsql_ls_scratch_free(mlsql_ls_scratch *s) {
    mlsql_scratch_free(&s->slots);
    free(s->cells);
    s->cells = NULL;
    s->cells_cap = 0;
}

/* One row: true labels a[0..na), score labels k[0..nk) with scores v[0..nk) (valid[i] == 0:
 * a NULL score), NULL labels already dropped from both; the row weighs w (> 0). */
static MLSQL_UNUSED int mlsql_ls_add_row(mlsql_ls_table *t, int mode, const mlsql_key *a,
                                         size_t na, const mlsql_key *k, const double *v,
                                         const unsigned char *valid, size_t nk, double w,
                                         mlsql_ls_scratch *s) {
    if (t->mode < 0) t->mode = mode;
    int text = t->text;
    if (na > SIZE_MAX - nk || nk > UINT32_MAX) return -1;
    size_t slots = mlsql_table_slots(na + nk, sizeof(mlsql_ls_row_slot));
    if (!slots || mlsql_scratch_reserve(&s->slots, slots * sizeof(mlsql_ls_row_slot)) != 0)
        return -1;
    mlsql_ls_row_slot *r = (mlsql_ls_row_slot *)s->slots.buf;
    memset(r, 0, slots * sizeof *r);
    size_t mask = slots - 1, n_row = 0;
    for (size_t side = 0; side < 2; side++) {
        const mlsql_key *x = side ? k : a;
        size_t n = side ? nk : na;
        for (size_t i = 0; i < n; i++) {
            uint64_t hv = mlsql_key_hash(text, &x[i]);
            size_t h = (size_t)hv & mask;
            while (r[h].flags && !(r[h].hash == hv && mlsql_key_eq(text, r[h].key, &x[i])))
                h = (h + 1) & mask;
            if (!r[h].flags) {
                r[h].key = &x[i];
                r[h].hash = hv;
                n_row++;
            }
            if (!side) {
                r[h].flags |= MLSQL_LS_TRUE;
            } else if (!(r[h].flags & MLSQL_LS_NAMED)) { /* a label's first score entry */
                r[h].flags |= MLSQL_LS_NAMED | (valid[i] ? MLSQL_LS_SCORED : 0);
                r[h].at = (uint32_t)i;
            }
        }
    }
    size_t n_cells = 0;
    if (mode == MLSQL_LS_ROWS && n_row > s->cells_cap) {
        if (n_row > SIZE_MAX / sizeof(mlsql_ls_cell)) return -1;
        mlsql_ls_cell *c = (mlsql_ls_cell *)realloc(s->cells, n_row * sizeof *c);
        if (!c) return -1;
        s->cells = c;
        s->cells_cap = n_row;
    }
    for (size_t h = 0; h < slots; h++) {
        uint32_t f = r[h].flags;
        if (!f || !(f & (MLSQL_LS_TRUE | MLSQL_LS_SCORED))) continue; /* only a NULL score */
        uint64_t skey = (f & MLSQL_LS_SCORED) ? mlsql_score_key(v[r[h].at])
                        : mode == MLSQL_LS_CELLS ? MLSQL_UNSCORED_KEY
                                                 : MLSQL_NEG_INF_KEY;
        int y = (f & MLSQL_LS_TRUE) != 0;
        int64_t id = mlsql_ls_label_id(t, r[h].key, r[h].hash);
        if (id < 0) return -1;
        t->labels[id].rows++;
        if (mode == MLSQL_LS_ROWS) {
            mlsql_ls_cell *c = &s->cells[n_cells++];
            c->skey = skey;
            c->label = 0;
            c->used = 1;
            c->pos = y;
            c->neg = !y;
        } else if (mlsql_ls_add_cell(t, mode == MLSQL_LS_POOL ? 0 : (uint32_t)id, skey,
                                     y ? w : 0, y ? 0 : w) != 0) {
            return -1;
        }
    }
    if (mode != MLSQL_LS_ROWS || n_cells == 0) return 0; /* a row without cells: empty */
    qsort(s->cells, n_cells, sizeof *s->cells, mlsql_ls_cmp_score);
    mlsql_ls_stats st;
    mlsql_ls_segment_stats(s->cells, n_cells, &st);
    mlsql_ls_rowseg *g =
        mlsql_ls_rowseg_at(t, (uint64_t)st.n_positive, (uint64_t)st.n_positive_unscored);
    if (!g) return -1;
    g->rows++;
    g->w += w;
    g->ne += w * st.n_explicit;
    g->ps += w * st.precision_sum;
    g->u += w * st.u;
    return 0;
}

/* Add everything src holds to dst (src is left as it was). -2: the two modes differ. */
static MLSQL_UNUSED int mlsql_ls_merge(mlsql_ls_table *dst, const mlsql_ls_table *src) {
    if (src->mode < 0) return 0;
    if (dst->mode < 0) dst->mode = src->mode;
    if (dst->mode != src->mode) return -2;
    uint32_t *ids = NULL;
    if (src->n_labels) {
        ids = (uint32_t *)malloc(src->n_labels * sizeof *ids);
        if (!ids) return -1;
    }
    for (size_t i = 0; i < src->n_labels; i++) {
        int64_t id = mlsql_ls_label_id(dst, &src->labels[i].key, src->labels[i].hash);
        if (id < 0) {
            free(ids);
            return -1;
        }
        ids[i] = (uint32_t)id;
        dst->labels[id].rows += src->labels[i].rows;
    }
    /* room for every cell of both at once: growing while merging held the old table and the
     * new one together (the peak of a merge of two threads' tables) */
    if (src->n_cells && (mlsql_ls_reserve(dst, dst->n_cells + src->n_cells) != 0 ||
                         (dst->sorted && mlsql_ls_rehash(dst, dst->cells_cap) != 0))) {
        free(ids);
        return -1;
    }
    for (size_t i = 0; i < src->cells_cap; i++) {
        const mlsql_ls_cell *c = &src->cells[i];
        if (!c->used) continue;
        uint32_t label = src->mode == MLSQL_LS_POOL || c->label >= src->n_labels ? 0 : ids[c->label];
        if (mlsql_ls_add_cell(dst, label, c->skey, c->pos, c->neg) != 0) {
            free(ids);
            return -1;
        }
    }
    free(ids);
    for (size_t r = 0; r < src->n_rowsegs; r++) {
        const mlsql_ls_rowseg *x = &src->rowsegs[r];
        mlsql_ls_rowseg *g = mlsql_ls_rowseg_at(dst, x->np, x->npu_count);
        if (!g) return -1;
        g->rows += x->rows;
        g->w += x->w;
        g->ne += x->ne;
        g->ps += x->ps;
        g->u += x->u;
    }
    return 0;
}

/* Compact the cells to the front of their array and sort them by (label, score descending):
 * each segment is then a run of one label (POOL: every cell has label 0). No allocation;
 * a later add or merge into this table rebuilds its hash table first. */
static MLSQL_UNUSED void mlsql_ls_sort(mlsql_ls_table *t) {
    if (t->sorted) return;
    size_t n = 0;
    for (size_t i = 0; i < t->cells_cap; i++)
        if (t->cells[i].used) t->cells[n++] = t->cells[i];
    for (size_t i = n; i < t->cells_cap; i++) t->cells[i].used = 0;
    if (n) qsort(t->cells, n, sizeof *t->cells, mlsql_ls_cmp_label_score);
    t->sorted = 1;
}

/* The number of segments of a sorted table (ROWS: the (positives, unscored) pairs seen). */
static MLSQL_UNUSED size_t mlsql_ls_segments(const mlsql_ls_table *t) {
    size_t m = 0;
    if (t->mode == MLSQL_LS_ROWS) return t->n_rowsegs;
    for (size_t i = 0; i < t->n_cells; i++)
        m += i == 0 || t->cells[i].label != t->cells[i - 1].label;
    return m;
}

/* The m = mlsql_ls_segments(t) segments of t (sorted with mlsql_ls_sort unless in ROWS mode) as
 * columns: f[0..5] their n_explicit, n_positive, n_positive_unscored, precision_sum, u and
 * weight w, rows their number of rows. A ROWS segment holds its rows' weighted means (w their
 * weight); a label's or the pool's weighs 1 and is one row. */
static MLSQL_UNUSED void mlsql_ls_emit(const mlsql_ls_table *t, size_t m, double *const f[6],
                                       int64_t *rows) {
    size_t j = 0;
    if (t->mode == MLSQL_LS_ROWS) {
        for (size_t r = 0; r < t->n_rowsegs && j < m; r++, j++) {
            const mlsql_ls_rowseg *g = &t->rowsegs[r];
            f[0][j] = g->ne / g->w;
            f[1][j] = (double)g->np;
            f[2][j] = (double)g->npu_count;
            f[3][j] = g->ps / g->w;
            f[4][j] = g->u / g->w;
            f[5][j] = g->w;
            rows[j] = g->rows;
        }
        return;
    }
    for (size_t c = 0; c < t->n_cells && j < m; j++) {
        size_t e = c;
        while (e < t->n_cells && t->cells[e].label == t->cells[c].label) e++;
        mlsql_ls_stats st;
        mlsql_ls_segment_stats(t->cells + c, e - c, &st);
        f[0][j] = st.n_explicit;
        f[1][j] = st.n_positive;
        f[2][j] = st.n_positive_unscored;
        f[3][j] = st.precision_sum;
        f[4][j] = st.u;
        f[5][j] = 1.0;
        rows[j] = 1;
        c = e;
    }
}

/* CELLS mode: the n_cells cells of t (any order) as columns: their label ids, scores (valid 0:
 * a true label without a score), positive and negative weights, and the rows of their label. */
static MLSQL_UNUSED void mlsql_ls_emit_cells(const mlsql_ls_table *t, uint32_t *label,
                                             double *score, unsigned char *valid, double *pos,
                                             double *neg, int64_t *rows) {
    size_t j = 0;
    for (size_t i = 0; i < t->cells_cap; i++) {
        const mlsql_ls_cell *c = &t->cells[i];
        if (!c->used) continue;
        label[j] = c->label; /* < t->n_labels in CELLS mode (every cell has a label's id) */
        valid[j] = c->skey != MLSQL_UNSCORED_KEY;
        score[j] = valid[j] ? mlsql_key_score(c->skey) : 0.0;
        pos[j] = c->pos;
        neg[j] = c->neg;
        rows[j] = c->label < t->n_labels ? (int64_t)t->labels[c->label].rows : 0;
        j++;
    }
}

#endif /* MLSQL_LABEL_SCORES_H */
