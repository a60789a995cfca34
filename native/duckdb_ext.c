/*
 * mlsql's DuckDB extension (C extension API, targeting C API v1.2.0).
 *
 * A scalar function and an aggregate:
 *   mlsql_native_counts(actual LIST, predicted LIST)
 *       -> STRUCT(tp BIGINT, n_actual BIGINT, n_predicted BIGINT)
 * the sizes |A ∩ P|, |A| and |P| of the two lists read as sets (duplicates
 * count once, NULL elements are not labels); a row where either list is NULL
 * gives a NULL struct (and NULL fields). Both lists hold text (VARCHAR) or
 * both hold integers of any width and sign (the widths may differ).
 *
 *
 *   mlsql_native_label_table(actual T[], predicted T[])  -- aggregate
 *       -> STRUCT(label T, tp BIGINT, n_actual BIGINT, n_predicted BIGINT, n BIGINT)[]
 * the per-label table of a group of rows (native/label_table.h): one entry
 * per label seen (label, tp, n_actual, n_predicted; n NULL), one per kind of
 * row (label NULL; the row's |A ∩ P|, |A|, |P| and n, how many rows), and one
 * for the unknown rows, where a list is NULL (only n set). T is VARCHAR or an
 * integer type (both lists of the same type: the caller casts them to their
 * common type first).
 *
 * DuckDB flattens the input chunk before calling a C API function, so
 * each input is a flat list vector over a flat child vector. Every list entry
 * is checked against its child vector's size before a child is read.
 * DuckDB calls the function from each of its threads; all state is local to
 * one call.
 *
 * The headers duckdb.h and duckdb_extension.h come from DuckDB's source
 * distribution at build time (native/build_duckdb.py).
 */
#define DUCKDB_EXTENSION_NAME mlsql
#define DUCKDB_EXTENSION_API_VERSION_MAJOR 1
#define DUCKDB_EXTENSION_API_VERSION_MINOR 2
#define DUCKDB_EXTENSION_API_VERSION_PATCH 0

#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "duckdb_extension.h"
#include "kernel.h"
#include "label_table.h"
#include "label_scores.h"

DUCKDB_EXTENSION_EXTERN

/* ------------------------------------------------------------------ growable arrays */

typedef struct {
    void *data;
    size_t cap; /* in items */
} growable;

/* Make g hold at least n items of `size` bytes. 0 ok, -1 out of memory. */
static int grow(growable *g, size_t n, size_t size) {
    if (n <= g->cap) return 0;
    size_t cap = g->cap ? g->cap : 64;
    while (cap < n) cap *= 2;
    if (cap > SIZE_MAX / size) return -1;
    void *p = realloc(g->data, cap * size);
    if (!p) return -1;
    g->data = p;
    g->cap = cap;
    return 0;
}

/* ------------------------------------------------------------------ one list input */

enum kind { KIND_TEXT, KIND_INT };

typedef struct {
    duckdb_list_entry *entries; /* one per row */
    uint64_t *validity;         /* row validity (NULL: all valid) */
    const void *child;          /* child data */
    uint64_t *child_validity;   /* element validity (NULL: all valid) */
    idx_t child_size;           /* elements in the child vector */
    duckdb_type type;           /* the child's type */
} list_input;

static inline bool is_valid(const uint64_t *validity, idx_t i) {
    return !validity || ((validity[i >> 6] >> (i & 63)) & 1);
}

static int type_kind(duckdb_type t) {
    switch (t) {
    case DUCKDB_TYPE_VARCHAR:
        return KIND_TEXT;
    case DUCKDB_TYPE_TINYINT:
    case DUCKDB_TYPE_SMALLINT:
    case DUCKDB_TYPE_INTEGER:
    case DUCKDB_TYPE_BIGINT:
    case DUCKDB_TYPE_UTINYINT:
    case DUCKDB_TYPE_USMALLINT:
    case DUCKDB_TYPE_UINTEGER:
    case DUCKDB_TYPE_UBIGINT:
        return KIND_INT;
    default:
        return -1;
    }
}

/* The kind of a label type the per-label table reads (also 128-bit integers). */
static int table_kind(duckdb_type t) {
    return t == DUCKDB_TYPE_HUGEINT || t == DUCKDB_TYPE_UHUGEINT ? KIND_INT : type_kind(t);
}

/* Read the list vector's layout; 0 ok, -1 not a list of a type `kind_of` accepts. */
static int open_list_of(duckdb_vector v, list_input *in, int (*kind_of)(duckdb_type)) {
    duckdb_logical_type lt = duckdb_vector_get_column_type(v);
    if (!lt) return -1;
    int ok = duckdb_get_type_id(lt) == DUCKDB_TYPE_LIST;
    if (ok) {
        duckdb_logical_type ct = duckdb_list_type_child_type(lt);
        in->type = duckdb_get_type_id(ct);
        duckdb_destroy_logical_type(&ct);
    }
    duckdb_destroy_logical_type(&lt);
    if (!ok || kind_of(in->type) < 0) return -1;
    duckdb_vector child = duckdb_list_vector_get_child(v);
    in->entries = (duckdb_list_entry *)duckdb_vector_get_data(v);
    in->validity = duckdb_vector_get_validity(v);
    in->child_size = duckdb_list_vector_get_size(v);
    /* an empty child vector is never read (DuckDB 1.2.2 trapped on an empty-list constant) */
    in->child = in->child_size ? duckdb_vector_get_data(child) : NULL;
    in->child_validity = in->child_size ? duckdb_vector_get_validity(child) : NULL;
    return 0;
}

static int open_list(duckdb_vector v, list_input *in) { return open_list_of(v, in, type_kind); }

/* Whether row i's entry lies inside the child vector. */
static inline bool entry_in_bounds(const list_input *in, idx_t i) {
    duckdb_list_entry e = in->entries[i];
    return e.offset <= in->child_size && e.length <= in->child_size - e.offset;
}

/* Row i's non-NULL text labels into t (which grows); their number in *n. */
static int gather_text(const list_input *in, idx_t i, growable *t, size_t *n) {
    duckdb_list_entry e = in->entries[i];
    if (grow(t, e.length, sizeof(mlsql_text)) != 0) return -1;
    mlsql_text *out = (mlsql_text *)t->data;
    duckdb_string_t *s = (duckdb_string_t *)in->child;
    size_t k = 0;
    for (idx_t j = e.offset; j < e.offset + e.length; j++) {
        if (!is_valid(in->child_validity, j)) continue;
        uint32_t len = s[j].value.inlined.length;
        /* 8 bytes are readable either way: 12 inlined bytes, or a label longer than 12 */
        out[k++] = mlsql_text_make_padded(
            len <= 12 ? s[j].value.inlined.inlined : s[j].value.pointer.ptr, len);
    }
    *n = k;
    return 0;
}

/* Every label of the child vector as mlsql_text, in one pass per chunk: when the child has no
 * NULL elements, row i's labels are then items [offset, offset + length) of t, read in place
 * (a call of gather_text per row and side cost more than its loop). */
static int gather_child_text(const list_input *in, growable *t) {
    if (grow(t, in->child_size, sizeof(mlsql_text)) != 0) return -1;
    mlsql_text *out = (mlsql_text *)t->data;
    const duckdb_string_t *s = (const duckdb_string_t *)in->child;
    for (idx_t j = 0; j < in->child_size; j++) {
        uint32_t len = s[j].value.inlined.length;
        out[j] = mlsql_text_make_padded( /* 8 readable bytes, as in gather_text */
            len <= 12 ? s[j].value.inlined.inlined : s[j].value.pointer.ptr, len);
    }
    return 0;
}

/* Row i's text labels: in place in `all` (filled by gather_child_text) when given, else
 * gathered into t. */
static int row_text(const list_input *in, idx_t i, const growable *all, growable *t,
                    const mlsql_text **items, size_t *n) {
    if (all) {
        duckdb_list_entry e = in->entries[i];
        *items = e.length ? (const mlsql_text *)all->data + e.offset : NULL;
        *n = e.length;
        return 0;
    }
    int rc = gather_text(in, i, t, n);
    *items = (const mlsql_text *)t->data;
    return rc;
}

/* Every label of the child vector as an integer key (mlsql_short_text_key), in one pass per
 * chunk; false (keys unusable) when a non-NULL label is longer than MLSQL_SHORT_TEXT_MAX bytes
 * (the pass then stops there).
 * Only the 16 bytes of each string_t are read (a short label is inlined), never its pointer. */
static int short_text_keys(const list_input *in, growable *keys, bool *all_short) {
    if (grow(keys, in->child_size, sizeof(int64_t)) != 0) return -1;
    int64_t *out = (int64_t *)keys->data;
    const duckdb_string_t *s = (const duckdb_string_t *)in->child;
    for (idx_t j = 0; j < in->child_size; j++) {
        uint32_t len = s[j].value.inlined.length;
        /* stop at the first long label (a NULL element's stale length does not count) */
        if (MLSQL_RARELY(len > MLSQL_SHORT_TEXT_MAX) && is_valid(in->child_validity, j)) {
            *all_short = false;
            return 0;
        }
        uint32_t n = len <= MLSQL_SHORT_TEXT_MAX ? len : 0; /* a NULL element's key is not used */
        out[j] = mlsql_short_text_key(mlsql_head8_padded(s[j].value.inlined.inlined, n), n);
    }
    *all_short = true;
    return 0;
}

/* Every label of the child vector as a two-word key (mlsql_medium_text_key), in one pass per
 * chunk, when none is longer than MLSQL_MEDIUM_TEXT_MAX bytes (false in *all_medium, and the
 * pass stops, at the first longer label). Only the inlined bytes of each string_t are read. */
static int medium_text_keys(const list_input *in, growable *keys, bool *all_medium) {
    if (grow(keys, in->child_size, sizeof(mlsql_key2)) != 0) return -1;
    mlsql_key2 *out = (mlsql_key2 *)keys->data;
    const duckdb_string_t *s = (const duckdb_string_t *)in->child;
    for (idx_t j = 0; j < in->child_size; j++) {
        uint32_t len = s[j].value.inlined.length;
        /* stop at the first long label (a NULL element's stale length does not count) */
        if (MLSQL_RARELY(len > MLSQL_MEDIUM_TEXT_MAX) && is_valid(in->child_validity, j)) {
            *all_medium = false;
            return 0;
        }
        uint32_t n = len <= MLSQL_MEDIUM_TEXT_MAX ? len : 0; /* a NULL element's key is unused */
        out[j] = mlsql_medium_text_key(s[j].value.inlined.inlined, n);
    }
    *all_medium = true;
    return 0;
}

/* Row i's non-NULL two-word keys (from medium_text_keys, `all`): in place when the child has no
 * NULL elements, else gathered into t. */
static inline int row_key2(const list_input *in, idx_t i, const mlsql_key2 *all, growable *t,
                           const mlsql_key2 **items, size_t *n) {
    duckdb_list_entry e = in->entries[i];
    if (!in->child_validity) {
        *items = e.length ? all + e.offset : NULL;
        *n = e.length;
        return 0;
    }
    if (grow(t, e.length, sizeof(mlsql_key2)) != 0) return -1;
    mlsql_key2 *out = (mlsql_key2 *)t->data;
    size_t k = 0;
    for (idx_t j = e.offset; j < e.offset + e.length; j++)
        if (is_valid(in->child_validity, j)) out[k++] = all[j];
    *items = out;
    *n = k;
    return 0;
}

/* Every integer label of the child vector as int64 (*all): the child itself for BIGINT and
 * UBIGINT (bit patterns: the caller pairs UBIGINT only with UBIGINT), else widened into keys in
 * one pass per chunk. NULL elements' slots are converted too and never used. */
static int int_keys(const list_input *in, growable *keys, const int64_t **all) {
    if (in->type == DUCKDB_TYPE_BIGINT || in->type == DUCKDB_TYPE_UBIGINT) {
        *all = (const int64_t *)in->child;
        return 0;
    }
    if (grow(keys, in->child_size, sizeof(int64_t)) != 0) return -1;
    int64_t *out = (int64_t *)keys->data;
    idx_t n = in->child_size;
    const void *c = in->child;
    switch (in->type) {
    case DUCKDB_TYPE_TINYINT:
        for (idx_t j = 0; j < n; j++) out[j] = ((const int8_t *)c)[j];
        break;
    case DUCKDB_TYPE_SMALLINT:
        for (idx_t j = 0; j < n; j++) out[j] = ((const int16_t *)c)[j];
        break;
    case DUCKDB_TYPE_INTEGER:
        for (idx_t j = 0; j < n; j++) out[j] = ((const int32_t *)c)[j];
        break;
    case DUCKDB_TYPE_UTINYINT:
        for (idx_t j = 0; j < n; j++) out[j] = ((const uint8_t *)c)[j];
        break;
    case DUCKDB_TYPE_USMALLINT:
        for (idx_t j = 0; j < n; j++) out[j] = ((const uint16_t *)c)[j];
        break;
    default: /* UINTEGER */
        for (idx_t j = 0; j < n; j++) out[j] = ((const uint32_t *)c)[j];
    }
    *all = out;
    return 0;
}

/* Row i's non-NULL keys (from short_text_keys or int_keys, `all`): in place when the child has
 * no NULL elements, else gathered into t. */
static inline int row_keys(const list_input *in, idx_t i, const int64_t *all, growable *t,
                           const int64_t **items, size_t *n) {
    duckdb_list_entry e = in->entries[i];
    if (!in->child_validity) {
        *items = e.length ? all + e.offset : NULL;
        *n = e.length;
        return 0;
    }
    if (grow(t, e.length, sizeof(int64_t)) != 0) return -1;
    int64_t *out = (int64_t *)t->data;
    size_t k = 0;
    for (idx_t j = e.offset; j < e.offset + e.length; j++)
        if (is_valid(in->child_validity, j)) out[k++] = all[j];
    *items = out;
    *n = k;
    return 0;
}

/* Row i's non-NULL integer labels as int64 (*out: in t, or the child itself for BIGINT lists
 * without NULL elements); with split_big, UBIGINT values above INT64_MAX (equal to no signed
 * label) go to big instead. */
static inline int gather_int(const list_input *in, idx_t i, growable *t, const int64_t **items,
                             size_t *n, bool split_big, growable *big, size_t *nbig) {
    duckdb_list_entry e = in->entries[i];
    *nbig = 0;
    if (in->type == DUCKDB_TYPE_BIGINT && !in->child_validity) {
        *items = e.length ? (const int64_t *)in->child + e.offset : NULL;
        *n = e.length;
        return 0;
    }
    if (grow(t, e.length, sizeof(int64_t)) != 0) return -1;
    if (split_big && grow(big, e.length, sizeof(int64_t)) != 0) return -1;
    int64_t *out = (int64_t *)t->data;
    int64_t *out_big = (int64_t *)big->data;
    size_t k = 0, kb = 0;
    for (idx_t j = e.offset; j < e.offset + e.length; j++) {
        if (!is_valid(in->child_validity, j)) continue;
        int64_t x;
        switch (in->type) {
        case DUCKDB_TYPE_TINYINT:
            x = ((const int8_t *)in->child)[j];
            break;
        case DUCKDB_TYPE_SMALLINT:
            x = ((const int16_t *)in->child)[j];
            break;
        case DUCKDB_TYPE_INTEGER:
            x = ((const int32_t *)in->child)[j];
            break;
        case DUCKDB_TYPE_BIGINT:
            x = ((const int64_t *)in->child)[j];
            break;
        case DUCKDB_TYPE_UTINYINT:
            x = ((const uint8_t *)in->child)[j];
            break;
        case DUCKDB_TYPE_USMALLINT:
            x = ((const uint16_t *)in->child)[j];
            break;
        case DUCKDB_TYPE_UINTEGER:
            x = ((const uint32_t *)in->child)[j];
            break;
        default: { /* UBIGINT */
            uint64_t u = ((const uint64_t *)in->child)[j];
            if (split_big && u > (uint64_t)INT64_MAX) {
                out_big[kb++] = (int64_t)u;
                continue;
            }
            x = (int64_t)u; /* both sides UBIGINT: the bit pattern keeps equality */
        }
        }
        out[k++] = x;
    }
    *items = out;
    *n = k;
    *nbig = kb;
    return 0;
}

/* ------------------------------------------------------------------ the scalar function */

static void counts_function(duckdb_function_info info, duckdb_data_chunk input,
                            duckdb_vector output) {
    idx_t rows = duckdb_data_chunk_get_size(input);
    list_input a, p;
    if (duckdb_data_chunk_get_column_count(input) != 2 ||
        open_list(duckdb_data_chunk_get_vector(input, 0), &a) != 0 ||
        open_list(duckdb_data_chunk_get_vector(input, 1), &p) != 0 ||
        type_kind(a.type) != type_kind(p.type)) {
        duckdb_scalar_function_set_error(
            info, "mlsql_native_counts: both arguments must be lists of text or of integers");
        return;
    }
    bool text = type_kind(a.type) == KIND_TEXT;
    /* a UBIGINT beyond INT64_MAX equals no signed label; split those off when kinds differ */
    bool split_a = !text && a.type == DUCKDB_TYPE_UBIGINT && p.type != DUCKDB_TYPE_UBIGINT;
    bool split_p = !text && p.type == DUCKDB_TYPE_UBIGINT && a.type != DUCKDB_TYPE_UBIGINT;

    duckdb_vector out_tp = duckdb_struct_vector_get_child(output, 0);
    duckdb_vector out_na = duckdb_struct_vector_get_child(output, 1);
    duckdb_vector out_np = duckdb_struct_vector_get_child(output, 2);
    int64_t *tp = (int64_t *)duckdb_vector_get_data(out_tp);
    int64_t *na = (int64_t *)duckdb_vector_get_data(out_na);
    int64_t *np = (int64_t *)duckdb_vector_get_data(out_np);

    /* all_*: the chunk's text labels; key_*: its integer keys (a growable holds one item size) */
    growable ga = {0}, gp = {0}, big = {0}, all_a = {0}, all_p = {0}, key_a = {0}, key_p = {0};
    growable key2_a = {0}, key2_p = {0}; /* the chunk's two-word keys (medium text) */
    mlsql_scratch scratch = {0};
    const char *error = NULL;
    /* text: when every label of the chunk is short, each side's labels become integer keys in
     * one pass; else text children without NULL elements are gathered once for the chunk */
    bool short_a = false, short_p = false;
    if (text && ((a.child_size && short_text_keys(&a, &key_a, &short_a) != 0) ||
                 (p.child_size && short_text_keys(&p, &key_p, &short_p) != 0))) {
        error = "mlsql_native_counts: out of memory";
        rows = 0;
    }
    /* an empty child has no labels to check */
    bool keyed = text && !error && (short_a || !a.child_size) && (short_p || !p.child_size);
    const int64_t *keys_a = (const int64_t *)key_a.data, *keys_p = (const int64_t *)key_p.data;
    /* text of up to 12 bytes a label (not all of at most 7): two-word keys, in one pass */
    bool medium_a = false, medium_p = false;
    if (text && !error && !keyed &&
        ((a.child_size && medium_text_keys(&a, &key2_a, &medium_a) != 0) ||
         (p.child_size && medium_text_keys(&p, &key2_p, &medium_p) != 0))) {
        error = "mlsql_native_counts: out of memory";
        rows = 0;
    }
    bool keyed2 = text && !error && !keyed && (medium_a || !a.child_size) &&
                  (medium_p || !p.child_size);
    const mlsql_key2 *keys2_a = (const mlsql_key2 *)key2_a.data;
    const mlsql_key2 *keys2_p = (const mlsql_key2 *)key2_p.data;
    /* integers: each side's labels as int64 keys once per chunk, unless UBIGINT labels beyond
     * INT64_MAX must be split off (the rows below then gather them) */
    if (!text && !split_a && !split_p) {
        keyed = true;
        if ((a.child_size && int_keys(&a, &key_a, &keys_a) != 0) ||
            (p.child_size && int_keys(&p, &key_p, &keys_p) != 0)) {
            error = "mlsql_native_counts: out of memory";
            rows = 0;
        }
    }
    bool whole_a = text && !keyed && !keyed2 && a.child_size && !a.child_validity;
    bool whole_p = text && !keyed && !keyed2 && p.child_size && !p.child_validity;
    if ((whole_a && gather_child_text(&a, &all_a) != 0) ||
        (whole_p && gather_child_text(&p, &all_p) != 0)) {
        error = "mlsql_native_counts: out of memory";
        rows = 0;
    }
    for (idx_t i = 0; i < rows; i++) {
        if (!is_valid(a.validity, i) || !is_valid(p.validity, i)) {
            duckdb_vector vs[4] = {output, out_tp, out_na, out_np};
            for (int k = 0; k < 4; k++) {
                duckdb_vector_ensure_validity_writable(vs[k]);
                duckdb_validity_set_row_invalid(duckdb_vector_get_validity(vs[k]), i);
            }
            tp[i] = na[i] = np[i] = 0;
            continue;
        }
        if (!entry_in_bounds(&a, i) || !entry_in_bounds(&p, i)) {
            error = "mlsql_native_counts: a list entry lies outside its child vector";
            break;
        }
        mlsql_counts c = {0, 0, 0};
        int rc;
        if (keyed) {
            size_t ka = 0, kp = 0;
            const int64_t *ia = NULL, *ip = NULL;
            rc = (a.child_size && row_keys(&a, i, keys_a, &ga, &ia, &ka)) ||
                 (p.child_size && row_keys(&p, i, keys_p, &gp, &ip, &kp));
            if (!rc) rc = mlsql_count_int(ia, ka, ip, kp, &scratch, &c);
        } else if (keyed2) {
            size_t ka = 0, kp = 0;
            const mlsql_key2 *ia = NULL, *ip = NULL;
            rc = (a.child_size && row_key2(&a, i, keys2_a, &ga, &ia, &ka)) ||
                 (p.child_size && row_key2(&p, i, keys2_p, &gp, &ip, &kp));
            if (!rc) rc = mlsql_count_key2(ia, ka, ip, kp, &scratch, &c);
        } else if (text) {
            size_t ka, kp;
            const mlsql_text *ta = NULL, *tq = NULL;
            rc = row_text(&a, i, whole_a ? &all_a : NULL, &ga, &ta, &ka) ||
                 row_text(&p, i, whole_p ? &all_p : NULL, &gp, &tq, &kp);
            if (!rc) rc = mlsql_count_text(ta, ka, tq, kp, &scratch, &c);
        } else {
            size_t ka, kp, ba = 0, bp = 0;
            const int64_t *ia = NULL, *ip = NULL;
            mlsql_counts extra = {0, 0, 0};
            rc = gather_int(&a, i, &ga, &ia, &ka, split_a, &big, &ba);
            if (!rc && ba) { /* A's labels no P label can equal: distinct count only */
                rc = mlsql_count_int((const int64_t *)big.data, ba, NULL, 0, &scratch, &extra);
            }
            if (!rc) rc = gather_int(&p, i, &gp, &ip, &kp, split_p, &big, &bp);
            if (!rc && bp) {
                mlsql_counts e2;
                rc = mlsql_count_int(NULL, 0, (const int64_t *)big.data, bp, &scratch, &e2);
                extra.n_predicted = e2.n_predicted;
            }
            if (!rc)
                rc = mlsql_count_int(ia, ka, ip, kp, &scratch, &c);
            c.n_actual += extra.n_actual;
            c.n_predicted += extra.n_predicted;
        }
        if (rc) {
            error = "mlsql_native_counts: out of memory";
            break;
        }
        tp[i] = c.tp;
        na[i] = c.n_actual;
        np[i] = c.n_predicted;
    }
    free(ga.data);
    free(gp.data);
    free(big.data);
    free(all_a.data);
    free(all_p.data);
    free(key_a.data);
    free(key_p.data);
    free(key2_a.data);
    free(key2_p.data);
    mlsql_scratch_free(&scratch);
    if (error) duckdb_scalar_function_set_error(info, error);
}

static duckdb_logical_type list_of(duckdb_type t);

/* ------------------------------------------------------------------ the per-label aggregate */

/* Row i's non-NULL labels as table keys into t (which grows); their number in *n. Integers are
 * widened to 128 bits (signed types sign-extended), so equal values give equal keys. With
 * `at`, each key's position in the row (0-based) goes there too (as size_t). */
static int gather_keys_at(const list_input *in, idx_t i, growable *t, size_t *n, growable *at) {
    duckdb_list_entry e = in->entries[i];
    if (grow(t, e.length, sizeof(mlsql_key)) != 0) return -1;
    if (at && grow(at, e.length, sizeof(size_t)) != 0) return -1;
    mlsql_key *out = (mlsql_key *)t->data;
    size_t k = 0;
    for (idx_t j = e.offset; j < e.offset + e.length; j++) {
        if (!is_valid(in->child_validity, j)) continue;
        if (at) ((size_t *)at->data)[k] = (size_t)(j - e.offset);
        mlsql_key *key = &out[k++];
        memset(key, 0, sizeof *key);
        int64_t x = 0;
        switch (in->type) {
        case DUCKDB_TYPE_VARCHAR: {
            duckdb_string_t *s = (duckdb_string_t *)in->child;
            uint32_t len = s[j].value.inlined.length;
            *key = mlsql_text_key_padded( /* 8 readable bytes, as in gather_text */
                len <= 12 ? s[j].value.inlined.inlined : s[j].value.pointer.ptr, len);
            continue;
        }
        case DUCKDB_TYPE_HUGEINT: {
            duckdb_hugeint h = ((const duckdb_hugeint *)in->child)[j];
            key->lo = h.lower;
            key->hi = (uint64_t)h.upper;
            continue;
        }
        case DUCKDB_TYPE_UHUGEINT: {
            duckdb_uhugeint h = ((const duckdb_uhugeint *)in->child)[j];
            key->lo = h.lower;
            key->hi = h.upper;
            continue;
        }
        case DUCKDB_TYPE_UTINYINT:
            key->lo = ((const uint8_t *)in->child)[j];
            continue;
        case DUCKDB_TYPE_USMALLINT:
            key->lo = ((const uint16_t *)in->child)[j];
            continue;
        case DUCKDB_TYPE_UINTEGER:
            key->lo = ((const uint32_t *)in->child)[j];
            continue;
        case DUCKDB_TYPE_UBIGINT:
            key->lo = ((const uint64_t *)in->child)[j];
            continue;
        case DUCKDB_TYPE_TINYINT:
            x = ((const int8_t *)in->child)[j];
            break;
        case DUCKDB_TYPE_SMALLINT:
            x = ((const int16_t *)in->child)[j];
            break;
        case DUCKDB_TYPE_INTEGER:
            x = ((const int32_t *)in->child)[j];
            break;
        default: /* BIGINT */
            x = ((const int64_t *)in->child)[j];
        }
        key->lo = (uint64_t)x;
        key->hi = x < 0 ? UINT64_MAX : 0;
    }
    *n = k;
    return 0;
}

static int gather_keys(const list_input *in, idx_t i, growable *t, size_t *n) {
    return gather_keys_at(in, i, t, n, NULL);
}

typedef struct {
    mlsql_label_table *table; /* NULL until the group's first row */
} table_state;

static idx_t table_state_size(duckdb_function_info info) {
    (void)info;
    return sizeof(table_state);
}

static void table_state_init(duckdb_function_info info, duckdb_aggregate_state state) {
    (void)info;
    ((table_state *)state)->table = NULL;
}

static void table_state_destroy(duckdb_aggregate_state *states, idx_t count) {
    for (idx_t i = 0; i < count; i++) {
        table_state *s = (table_state *)states[i];
        if (s->table) {
            mlsql_lt_free(s->table);
            free(s->table);
            s->table = NULL;
        }
    }
}

/* The state's table, made on first use; NULL when out of memory. */
static mlsql_label_table *state_table(duckdb_aggregate_state state, int text) {
    table_state *s = (table_state *)state;
    if (!s->table) {
        s->table = (mlsql_label_table *)malloc(sizeof *s->table);
        if (s->table) mlsql_lt_init(s->table, text);
    }
    return s->table;
}

static void table_update(duckdb_function_info info, duckdb_data_chunk input,
                         duckdb_aggregate_state *states) {
    idx_t rows = duckdb_data_chunk_get_size(input);
    list_input a, p;
    if (duckdb_data_chunk_get_column_count(input) != 2 ||
        open_list_of(duckdb_data_chunk_get_vector(input, 0), &a, table_kind) != 0 ||
        open_list_of(duckdb_data_chunk_get_vector(input, 1), &p, table_kind) != 0 ||
        a.type != p.type) {
        duckdb_aggregate_function_set_error(
            info, "mlsql_native_label_table: both arguments must be lists of one label type");
        return;
    }
    int text = a.type == DUCKDB_TYPE_VARCHAR;
    growable ga = {0}, gp = {0};
    mlsql_scratch scratch = {0};
    const char *error = NULL;
    for (idx_t i = 0; i < rows && !error; i++) {
        mlsql_label_table *t = state_table(states[i], text);
        if (!t) {
            error = "mlsql_native_label_table: out of memory";
            break;
        }
        if (!is_valid(a.validity, i) || !is_valid(p.validity, i)) {
            mlsql_lt_add_unknown(t, 1);
            continue;
        }
        if (!entry_in_bounds(&a, i) || !entry_in_bounds(&p, i)) {
            error = "mlsql_native_label_table: a list entry lies outside its child vector";
            break;
        }
        size_t ka, kp;
        if (gather_keys(&a, i, &ga, &ka) || gather_keys(&p, i, &gp, &kp) ||
            mlsql_lt_add_row(t, (const mlsql_key *)ga.data, ka, (const mlsql_key *)gp.data, kp,
                             &scratch))
            error = "mlsql_native_label_table: out of memory";
    }
    free(ga.data);
    free(gp.data);
    mlsql_scratch_free(&scratch);
    if (error) duckdb_aggregate_function_set_error(info, error);
}

static void table_combine(duckdb_function_info info, duckdb_aggregate_state *source,
                          duckdb_aggregate_state *target, idx_t count) {
    for (idx_t i = 0; i < count; i++) {
        const table_state *src = (const table_state *)source[i];
        if (!src->table) continue;
        mlsql_label_table *dst = state_table(target[i], src->table->text);
        if (!dst || mlsql_lt_merge(dst, src->table) != 0) {
            duckdb_aggregate_function_set_error(info, "mlsql_native_label_table: out of memory");
            return;
        }
    }
}

/* Write entry j of an output struct: label (from key, or NULL) and four BIGINTs (NULL: !valid). */
typedef struct {
    duckdb_vector label, field[4];
    int64_t *data[4];
    uint64_t *validity[5];
    duckdb_type label_type;
} table_output;

static void set_validity(uint64_t *validity, idx_t j, bool valid) {
    if (valid)
        duckdb_validity_set_row_valid(validity, j);
    else
        duckdb_validity_set_row_invalid(validity, j);
}

static void write_label(table_output *o, idx_t j, const mlsql_key *k) {
    set_validity(o->validity[0], j, k != NULL);
    if (!k) return;
    void *d = duckdb_vector_get_data(o->label);
    switch (o->label_type) {
    case DUCKDB_TYPE_VARCHAR:
        duckdb_vector_assign_string_element_len(o->label, j, k->len ? k->ptr : "", k->len);
        break;
    case DUCKDB_TYPE_TINYINT:
        ((int8_t *)d)[j] = (int8_t)k->lo;
        break;
    case DUCKDB_TYPE_SMALLINT:
        ((int16_t *)d)[j] = (int16_t)k->lo;
        break;
    case DUCKDB_TYPE_INTEGER:
        ((int32_t *)d)[j] = (int32_t)k->lo;
        break;
    case DUCKDB_TYPE_BIGINT:
        ((int64_t *)d)[j] = (int64_t)k->lo;
        break;
    case DUCKDB_TYPE_UTINYINT:
        ((uint8_t *)d)[j] = (uint8_t)k->lo;
        break;
    case DUCKDB_TYPE_USMALLINT:
        ((uint16_t *)d)[j] = (uint16_t)k->lo;
        break;
    case DUCKDB_TYPE_UINTEGER:
        ((uint32_t *)d)[j] = (uint32_t)k->lo;
        break;
    case DUCKDB_TYPE_UBIGINT:
        ((uint64_t *)d)[j] = k->lo;
        break;
    case DUCKDB_TYPE_HUGEINT: {
        duckdb_hugeint h = {k->lo, (int64_t)k->hi};
        ((duckdb_hugeint *)d)[j] = h;
        break;
    }
    default: { /* UHUGEINT */
        duckdb_uhugeint h = {k->lo, k->hi};
        ((duckdb_uhugeint *)d)[j] = h;
    }
    }
}

static void write_fields(table_output *o, idx_t j, const int64_t v[4], const bool valid[4]) {
    for (int f = 0; f < 4; f++) {
        o->data[f][j] = valid[f] ? v[f] : 0;
        set_validity(o->validity[f + 1], j, valid[f]);
    }
}

/* The type of the first field (the label) of the structs in list vector `result`. */
static duckdb_type entry_label_type(duckdb_vector result) {
    duckdb_logical_type list_type = duckdb_vector_get_column_type(result);
    duckdb_logical_type struct_type = duckdb_list_type_child_type(list_type);
    duckdb_logical_type label_type = duckdb_struct_type_child_type(struct_type, 0);
    duckdb_type label_id = duckdb_get_type_id(label_type);
    duckdb_destroy_logical_type(&label_type);
    duckdb_destroy_logical_type(&struct_type);
    duckdb_destroy_logical_type(&list_type);
    return label_id;
}

static void table_finalize(duckdb_function_info info, duckdb_aggregate_state *source,
                           duckdb_vector result, idx_t count, idx_t offset) {
    duckdb_type label_id = entry_label_type(result);
    idx_t total = duckdb_list_vector_get_size(result);
    for (idx_t i = 0; i < count; i++) {
        const table_state *s = (const table_state *)source[i];
        const mlsql_label_table *t = s->table;
        idx_t m = t ? mlsql_lt_entries(t) : 0;
        if (duckdb_list_vector_reserve(result, total + m) != DuckDBSuccess ||
            duckdb_list_vector_set_size(result, total + m) != DuckDBSuccess) {
            duckdb_aggregate_function_set_error(info, "mlsql_native_label_table: out of memory");
            return;
        }
        duckdb_list_entry *entries = (duckdb_list_entry *)duckdb_vector_get_data(result);
        entries[offset + i].offset = total;
        entries[offset + i].length = m;
        if (m == 0) continue;
        duckdb_vector child = duckdb_list_vector_get_child(result);
        table_output o;
        o.label_type = label_id;
        o.label = duckdb_struct_vector_get_child(child, 0);
        duckdb_vector_ensure_validity_writable(o.label);
        o.validity[0] = duckdb_vector_get_validity(o.label);
        for (int f = 0; f < 4; f++) {
            o.field[f] = duckdb_struct_vector_get_child(child, (idx_t)f + 1);
            duckdb_vector_ensure_validity_writable(o.field[f]);
            o.data[f] = (int64_t *)duckdb_vector_get_data(o.field[f]);
            o.validity[f + 1] = duckdb_vector_get_validity(o.field[f]);
        }
        idx_t j = total;
        for (size_t k = 0; k < t->label_cap; k++) {
            const mlsql_label_slot *x = &t->labels[k];
            if (!x->used) continue;
            int64_t v[4] = {x->tp, x->n_actual, x->n_predicted, 0};
            bool valid[4] = {true, true, true, false};
            write_label(&o, j, &x->key);
            write_fields(&o, j++, v, valid);
        }
        for (size_t k = 0; k < t->row_cap; k++) {
            const mlsql_row_slot *r = &t->rows[k];
            if (!r->used) continue;
            int64_t v[4] = {r->tp, r->n_actual, r->n_predicted, r->n};
            bool valid[4] = {true, true, true, true};
            write_label(&o, j, NULL);
            write_fields(&o, j++, v, valid);
        }
        if (t->unknown > 0) {
            int64_t v[4] = {0, 0, 0, t->unknown};
            bool valid[4] = {false, false, false, true};
            write_label(&o, j, NULL);
            write_fields(&o, j++, v, valid);
        }
        total = j;
    }
}

static const duckdb_type TABLE_LABEL_TYPES[] = {
    DUCKDB_TYPE_VARCHAR,  DUCKDB_TYPE_TINYINT,   DUCKDB_TYPE_SMALLINT, DUCKDB_TYPE_INTEGER,
    DUCKDB_TYPE_BIGINT,   DUCKDB_TYPE_HUGEINT,   DUCKDB_TYPE_UTINYINT, DUCKDB_TYPE_USMALLINT,
    DUCKDB_TYPE_UINTEGER, DUCKDB_TYPE_UBIGINT,   DUCKDB_TYPE_UHUGEINT,
};

static duckdb_logical_type table_type(duckdb_type label) {
    duckdb_logical_type members[5];
    members[0] = duckdb_create_logical_type(label);
    for (int f = 1; f < 5; f++) members[f] = duckdb_create_logical_type(DUCKDB_TYPE_BIGINT);
    const char *names[5] = {"label", "tp", "n_actual", "n_predicted", "n"};
    duckdb_logical_type entry = duckdb_create_struct_type(members, names, 5);
    duckdb_logical_type out = duckdb_create_list_type(entry);
    duckdb_destroy_logical_type(&entry);
    for (int f = 0; f < 5; f++) duckdb_destroy_logical_type(&members[f]);
    return out;
}

/* The aggregate's name; a test builds the extension under another one to stand for a build
 * from older sources, which lacks the function (mlsql's probe must then refuse it). */
#ifndef MLSQL_LABEL_TABLE_NAME
#define MLSQL_LABEL_TABLE_NAME "mlsql_native_label_table"
#endif

static bool register_label_table(duckdb_connection connection) {
    duckdb_aggregate_function_set set =
        duckdb_create_aggregate_function_set(MLSQL_LABEL_TABLE_NAME);
    bool ok = true;
    size_t n = sizeof TABLE_LABEL_TYPES / sizeof TABLE_LABEL_TYPES[0];
    for (size_t i = 0; ok && i < n; i++) {
        duckdb_aggregate_function f = duckdb_create_aggregate_function();
        duckdb_aggregate_function_set_name(f, MLSQL_LABEL_TABLE_NAME);
        duckdb_logical_type list = list_of(TABLE_LABEL_TYPES[i]);
        duckdb_logical_type ret = table_type(TABLE_LABEL_TYPES[i]);
        duckdb_aggregate_function_add_parameter(f, list);
        duckdb_aggregate_function_add_parameter(f, list);
        duckdb_aggregate_function_set_return_type(f, ret);
        duckdb_aggregate_function_set_functions(f, table_state_size, table_state_init, table_update,
                                                table_combine, table_finalize);
        duckdb_aggregate_function_set_destructor(f, table_state_destroy);
        duckdb_aggregate_function_set_special_handling(f); /* NULL lists are unknown rows */
        ok = duckdb_add_aggregate_function_to_set(set, f) == DuckDBSuccess;
        duckdb_destroy_logical_type(&list);
        duckdb_destroy_logical_type(&ret);
        duckdb_destroy_aggregate_function(&f);
    }
    ok = ok && duckdb_register_aggregate_function_set(connection, set) == DuckDBSuccess;
    duckdb_destroy_aggregate_function_set(&set);
    return ok;
}

/* ------------------------------------------------------------------ the label-score aggregate
 *
 *   mlsql_native_label_scores(actual T[], labels T[], scores DOUBLE[], weight DOUBLE,
 *                             mode INTEGER)  -- aggregate
 *       -> STRUCT(nu BIGINT, segs STRUCT(n_explicit DOUBLE, n_positive DOUBLE,
 *                 n_positive_unscored DOUBLE, precision_sum DOUBLE, u DOUBLE, w DOUBLE,
 *                 rows BIGINT)[])
 * a group's segment statistics (native/label_scores.h): labels[i] is scored scores[i] (the
 * two lists of a row have one length: a score map's keys and values); mode 0 pools every
 * cell into one segment (micro), 1 makes one segment per label (macro, weighted), 2 one per
 * (positives, unscored positives) of a row (samples: each row's statistics, weighted means
 * over the rows of that kind, w their weight and rows their number). nu: the distinct
 * labels of the cells. A row where any argument is NULL is skipped (the caller filters the
 * rows it means to skip, and those of weight 0, before). */

typedef struct {
    mlsql_ls_table *table; /* NULL until the group's first row */
} scores_state;

static idx_t scores_state_size(duckdb_function_info info) {
    (void)info;
    return sizeof(scores_state);
}

static void scores_state_init(duckdb_function_info info, duckdb_aggregate_state state) {
    (void)info;
    ((scores_state *)state)->table = NULL;
}

static void scores_state_destroy(duckdb_aggregate_state *states, idx_t count) {
    for (idx_t i = 0; i < count; i++) {
        scores_state *s = (scores_state *)states[i];
        if (s->table) {
            mlsql_ls_free(s->table);
            free(s->table);
            s->table = NULL;
        }
    }
}

static mlsql_ls_table *scores_table(duckdb_aggregate_state state, int text) {
    scores_state *s = (scores_state *)state;
    if (!s->table) {
        s->table = (mlsql_ls_table *)malloc(sizeof *s->table);
        if (s->table) mlsql_ls_init(s->table, text);
    }
    return s->table;
}

static int double_kind(duckdb_type t) { return t == DUCKDB_TYPE_DOUBLE ? KIND_INT : -1; }

/* Overridable as MLSQL_LABEL_TABLE_NAME is (a test's stand-in for a build of older sources). */
#ifndef MLSQL_LABEL_SCORES_NAME
#define MLSQL_LABEL_SCORES_NAME "mlsql_native_label_scores"
#endif
#define SCORES_NAME MLSQL_LABEL_SCORES_NAME

/* The update of both label-score aggregates: name is the function's, modes lo..hi allowed. */
static void scores_update_modes(duckdb_function_info info, duckdb_data_chunk input,
                                duckdb_aggregate_state *states, const char *name, int lo,
                                int hi) {
    char message[160];
    idx_t rows = duckdb_data_chunk_get_size(input);
    list_input a, k, v;
    duckdb_vector wv = NULL, mv = NULL;
    bool ok = duckdb_data_chunk_get_column_count(input) == 5 &&
              open_list_of(duckdb_data_chunk_get_vector(input, 0), &a, table_kind) == 0 &&
              open_list_of(duckdb_data_chunk_get_vector(input, 1), &k, table_kind) == 0 &&
              open_list_of(duckdb_data_chunk_get_vector(input, 2), &v, double_kind) == 0 &&
              a.type == k.type;
    if (ok) {
        wv = duckdb_data_chunk_get_vector(input, 3);
        mv = duckdb_data_chunk_get_vector(input, 4);
        duckdb_logical_type wt = duckdb_vector_get_column_type(wv);
        duckdb_logical_type mt = duckdb_vector_get_column_type(mv);
        ok = wt && mt && duckdb_get_type_id(wt) == DUCKDB_TYPE_DOUBLE &&
             duckdb_get_type_id(mt) == DUCKDB_TYPE_INTEGER;
        duckdb_destroy_logical_type(&wt);
        duckdb_destroy_logical_type(&mt);
    }
    if (!ok) {
        snprintf(message, sizeof message,
                 "%s: takes (T[], T[], DOUBLE[], DOUBLE, INTEGER), T one label type", name);
        duckdb_aggregate_function_set_error(info, message);
        return;
    }
    const double *w = (const double *)duckdb_vector_get_data(wv);
    const uint64_t *w_valid = duckdb_vector_get_validity(wv);
    const int32_t *mode = (const int32_t *)duckdb_vector_get_data(mv);
    const uint64_t *m_valid = duckdb_vector_get_validity(mv);
    const double *vals = (const double *)v.child;
    int text = a.type == DUCKDB_TYPE_VARCHAR;
    growable ga = {0}, gk = {0}, at = {0}, gv = {0}, gvalid = {0};
    mlsql_ls_scratch scratch = {0};
    const char *error = NULL;
    for (idx_t i = 0; i < rows && !error; i++) {
        if (!is_valid(a.validity, i) || !is_valid(k.validity, i) || !is_valid(v.validity, i) ||
            !is_valid(w_valid, i) || !is_valid(m_valid, i))
            continue;
        if (!(w[i] > 0)) continue; /* a row of weight 0 counts nowhere (NaN: the caller's check) */
        if (mode[i] < lo || mode[i] > hi) {
            error = "a mode out of range";
            break;
        }
        mlsql_ls_table *t = scores_table(states[i], text);
        if (!t) {
            error = "out of memory";
            break;
        }
        if (t->mode >= 0 && t->mode != mode[i]) {
            error = "one group's rows ask for two modes";
            break;
        }
        if (!entry_in_bounds(&a, i) || !entry_in_bounds(&k, i) || !entry_in_bounds(&v, i)) {
            error = "a list entry lies outside its child vector";
            break;
        }
        duckdb_list_entry ke = k.entries[i], ve = v.entries[i];
        if (ke.length != ve.length) {
            error = "a row's labels and scores differ in length";
            break;
        }
        size_t na, nk;
        if (gather_keys(&a, i, &ga, &na) || gather_keys_at(&k, i, &gk, &nk, &at) ||
            grow(&gv, nk, sizeof(double)) || grow(&gvalid, nk, 1)) {
            error = "out of memory";
            break;
        }
        double *sv = (double *)gv.data;
        unsigned char *sok = (unsigned char *)gvalid.data;
        for (size_t j = 0; j < nk; j++) {
            idx_t c = ve.offset + ((const size_t *)at.data)[j]; /* < ve.offset + ve.length */
            sok[j] = (unsigned char)is_valid(v.child_validity, c);
            sv[j] = sok[j] ? vals[c] : 0.0;
        }
        if (mlsql_ls_add_row(t, mode[i], (const mlsql_key *)ga.data, na,
                             (const mlsql_key *)gk.data, sv, sok, nk, w[i], &scratch) != 0)
            error = "out of memory";
    }
    free(ga.data);
    free(gk.data);
    free(at.data);
    free(gv.data);
    free(gvalid.data);
    mlsql_ls_scratch_free(&scratch);
    if (error) {
        snprintf(message, sizeof message, "%s: %s", name, error);
        duckdb_aggregate_function_set_error(info, message);
    }
}

static void scores_update(duckdb_function_info info, duckdb_data_chunk input,
                          duckdb_aggregate_state *states) {
    scores_update_modes(info, input, states, SCORES_NAME, MLSQL_LS_POOL, MLSQL_LS_ROWS);
}

static void scores_combine(duckdb_function_info info, duckdb_aggregate_state *source,
                           duckdb_aggregate_state *target, idx_t count) {
    for (idx_t i = 0; i < count; i++) {
        const scores_state *src = (const scores_state *)source[i];
        if (!src->table) continue;
        mlsql_ls_table *dst = scores_table(target[i], src->table->text);
        int rc = dst ? mlsql_ls_merge(dst, src->table) : -1;
        if (rc != 0) {
            duckdb_aggregate_function_set_error(
                info, rc == -2 ? SCORES_NAME ": one group's rows ask for two modes"
                               : SCORES_NAME ": out of memory");
            return;
        }
    }
}

static void scores_finalize(duckdb_function_info info, duckdb_aggregate_state *source,
                            duckdb_vector result, idx_t count, idx_t offset) {
    duckdb_vector nu_vec = duckdb_struct_vector_get_child(result, 0);
    duckdb_vector segs = duckdb_struct_vector_get_child(result, 1);
    int64_t *nu = (int64_t *)duckdb_vector_get_data(nu_vec);
    idx_t total = duckdb_list_vector_get_size(segs);
    for (idx_t i = 0; i < count; i++) {
        mlsql_ls_table *t = ((scores_state *)source[i])->table;
        idx_t m = 0;
        if (t) {
            if (t->mode != MLSQL_LS_ROWS) mlsql_ls_sort(t);
            m = mlsql_ls_segments(t);
        }
        nu[offset + i] = t ? (int64_t)t->n_labels : 0;
        if (duckdb_list_vector_reserve(segs, total + m) != DuckDBSuccess ||
            duckdb_list_vector_set_size(segs, total + m) != DuckDBSuccess) {
            duckdb_aggregate_function_set_error(info, SCORES_NAME ": out of memory");
            return;
        }
        duckdb_list_entry *entries = (duckdb_list_entry *)duckdb_vector_get_data(segs);
        entries[offset + i].offset = total;
        entries[offset + i].length = m;
        if (m == 0) continue;
        duckdb_vector child = duckdb_list_vector_get_child(segs);
        double *f[6]; /* this group's segments start at row `total` of each column */
        for (idx_t c = 0; c < 6; c++)
            f[c] = (double *)duckdb_vector_get_data(duckdb_struct_vector_get_child(child, c)) + total;
        int64_t *nrows = (int64_t *)duckdb_vector_get_data(duckdb_struct_vector_get_child(child, 6));
        mlsql_ls_emit(t, m, f, nrows + total);
        total += m;
    }
}

static duckdb_logical_type scores_type(void) {
    duckdb_logical_type dbl = duckdb_create_logical_type(DUCKDB_TYPE_DOUBLE);
    duckdb_logical_type big = duckdb_create_logical_type(DUCKDB_TYPE_BIGINT);
    duckdb_logical_type members[7] = {dbl, dbl, dbl, dbl, dbl, dbl, big};
    const char *names[7] = {"n_explicit", "n_positive", "n_positive_unscored", "precision_sum",
                            "u", "w", "rows"};
    duckdb_logical_type seg = duckdb_create_struct_type(members, names, 7);
    duckdb_logical_type segs = duckdb_create_list_type(seg);
    duckdb_logical_type outer[2] = {big, segs};
    const char *outer_names[2] = {"nu", "segs"};
    duckdb_logical_type out = duckdb_create_struct_type(outer, outer_names, 2);
    duckdb_destroy_logical_type(&segs);
    duckdb_destroy_logical_type(&seg);
    duckdb_destroy_logical_type(&big);
    duckdb_destroy_logical_type(&dbl);
    return out;
}

/* The return type of a label-score aggregate's overload on labels of type `label`. */
typedef duckdb_logical_type (*scores_return_type)(duckdb_type label);

static duckdb_logical_type scores_type_of(duckdb_type label) {
    (void)label;
    return scores_type();
}

/* Register aggregate `name` over (T[], T[], DOUBLE[], DOUBLE, INTEGER), an overload per label
 * type T, on the label-score state (native/label_scores.h) with its own update and finalize. */
static bool register_scores_set(duckdb_connection connection, const char *name,
                                duckdb_aggregate_update_t update,
                                duckdb_aggregate_finalize_t finalize, scores_return_type ret_of) {
    duckdb_aggregate_function_set set = duckdb_create_aggregate_function_set(name);
    duckdb_logical_type dbl = duckdb_create_logical_type(DUCKDB_TYPE_DOUBLE);
    duckdb_logical_type dbl_list = duckdb_create_list_type(dbl);
    duckdb_logical_type integer = duckdb_create_logical_type(DUCKDB_TYPE_INTEGER);
    bool ok = true;
    size_t n = sizeof TABLE_LABEL_TYPES / sizeof TABLE_LABEL_TYPES[0];
    for (size_t i = 0; ok && i < n; i++) {
        duckdb_aggregate_function f = duckdb_create_aggregate_function();
        duckdb_aggregate_function_set_name(f, name);
        duckdb_logical_type list = list_of(TABLE_LABEL_TYPES[i]);
        duckdb_logical_type ret = ret_of(TABLE_LABEL_TYPES[i]);
        duckdb_aggregate_function_add_parameter(f, list);
        duckdb_aggregate_function_add_parameter(f, list);
        duckdb_aggregate_function_add_parameter(f, dbl_list);
        duckdb_aggregate_function_add_parameter(f, dbl);
        duckdb_aggregate_function_add_parameter(f, integer);
        duckdb_aggregate_function_set_return_type(f, ret);
        duckdb_aggregate_function_set_functions(f, scores_state_size, scores_state_init, update,
                                                scores_combine, finalize);
        duckdb_aggregate_function_set_destructor(f, scores_state_destroy);
        duckdb_aggregate_function_set_special_handling(f); /* NULL rows skipped in update */
        ok = duckdb_add_aggregate_function_to_set(set, f) == DuckDBSuccess;
        duckdb_destroy_logical_type(&list);
        duckdb_destroy_logical_type(&ret);
        duckdb_destroy_aggregate_function(&f);
    }
    ok = ok && duckdb_register_aggregate_function_set(connection, set) == DuckDBSuccess;
    duckdb_destroy_logical_type(&integer);
    duckdb_destroy_logical_type(&dbl_list);
    duckdb_destroy_logical_type(&dbl);
    duckdb_destroy_aggregate_function_set(&set);
    return ok;
}

static bool register_label_scores(duckdb_connection connection) {
    return register_scores_set(connection, SCORES_NAME, scores_update, scores_finalize,
                               scores_type_of);
}

/* ------------------------------------------------------------------ the label-cell aggregate
 *
 *   mlsql_native_label_cells(actual T[], labels T[], scores DOUBLE[], weight DOUBLE,
 *                            mode INTEGER)  -- aggregate; mode must be 3
 *       -> STRUCT(label T, score DOUBLE, pos DOUBLE, neg DOUBLE, rows BIGINT)[]
 * a group's cells (native/label_scores.h, MLSQL_LS_CELLS): per (label, distinct score) the
 * weight of the rows where the label is true (pos) and not (neg); score NULL: the label true
 * in rows without a score for it; rows: the rows with a cell of the label. The rows it reads
 * and skips are those of mlsql_native_label_scores; its state is that function's. */

#ifndef MLSQL_LABEL_CELLS_NAME
#define MLSQL_LABEL_CELLS_NAME "mlsql_native_label_cells"
#endif
#define CELLS_NAME MLSQL_LABEL_CELLS_NAME

static void cells_update(duckdb_function_info info, duckdb_data_chunk input,
                         duckdb_aggregate_state *states) {
    scores_update_modes(info, input, states, CELLS_NAME, MLSQL_LS_CELLS, MLSQL_LS_CELLS);
}

static void cells_finalize(duckdb_function_info info, duckdb_aggregate_state *source,
                           duckdb_vector result, idx_t count, idx_t offset) {
    duckdb_type label_id = entry_label_type(result);
    idx_t total = duckdb_list_vector_get_size(result);
    growable gl = {0}, gs = {0}, gv = {0}, gp = {0}, gn = {0}, gr = {0};
    for (idx_t i = 0; i < count; i++) {
        const mlsql_ls_table *t = ((const scores_state *)source[i])->table;
        idx_t m = t ? t->n_cells : 0;
        if (duckdb_list_vector_reserve(result, total + m) != DuckDBSuccess ||
            duckdb_list_vector_set_size(result, total + m) != DuckDBSuccess ||
            grow(&gl, m, sizeof(uint32_t)) || grow(&gs, m, sizeof(double)) || grow(&gv, m, 1) ||
            grow(&gp, m, sizeof(double)) || grow(&gn, m, sizeof(double)) ||
            grow(&gr, m, sizeof(int64_t))) {
            duckdb_aggregate_function_set_error(info, CELLS_NAME ": out of memory");
            break;
        }
        duckdb_list_entry *entries = (duckdb_list_entry *)duckdb_vector_get_data(result);
        entries[offset + i].offset = total;
        entries[offset + i].length = m;
        if (m == 0) continue;
        uint32_t *labels = (uint32_t *)gl.data;
        double *score = (double *)gs.data, *pos = (double *)gp.data, *neg = (double *)gn.data;
        unsigned char *valid = (unsigned char *)gv.data;
        int64_t *rows = (int64_t *)gr.data;
        mlsql_ls_emit_cells(t, labels, score, valid, pos, neg, rows);
        duckdb_vector child = duckdb_list_vector_get_child(result);
        table_output o;
        o.label_type = label_id;
        o.label = duckdb_struct_vector_get_child(child, 0);
        duckdb_vector_ensure_validity_writable(o.label);
        o.validity[0] = duckdb_vector_get_validity(o.label);
        duckdb_vector sv = duckdb_struct_vector_get_child(child, 1);
        duckdb_vector_ensure_validity_writable(sv);
        uint64_t *s_valid = duckdb_vector_get_validity(sv);
        double *out_s = (double *)duckdb_vector_get_data(sv) + total;
        double *out_p = (double *)duckdb_vector_get_data(duckdb_struct_vector_get_child(child, 2)) + total;
        double *out_n = (double *)duckdb_vector_get_data(duckdb_struct_vector_get_child(child, 3)) + total;
        int64_t *out_r = (int64_t *)duckdb_vector_get_data(duckdb_struct_vector_get_child(child, 4)) + total;
        for (idx_t j = 0; j < m; j++) {
            write_label(&o, total + j, labels[j] < t->n_labels ? &t->labels[labels[j]].key : NULL);
            set_validity(s_valid, total + j, valid[j]);
            out_s[j] = score[j];
            out_p[j] = pos[j];
            out_n[j] = neg[j];
            out_r[j] = rows[j];
        }
        total += m;
    }
    free(gl.data);
    free(gs.data);
    free(gv.data);
    free(gp.data);
    free(gn.data);
    free(gr.data);
}

static duckdb_logical_type cells_type(duckdb_type label) {
    duckdb_logical_type dbl = duckdb_create_logical_type(DUCKDB_TYPE_DOUBLE);
    duckdb_logical_type big = duckdb_create_logical_type(DUCKDB_TYPE_BIGINT);
    duckdb_logical_type lab = duckdb_create_logical_type(label);
    duckdb_logical_type members[5] = {lab, dbl, dbl, dbl, big};
    const char *names[5] = {"label", "score", "pos", "neg", "rows"};
    duckdb_logical_type entry = duckdb_create_struct_type(members, names, 5);
    duckdb_logical_type out = duckdb_create_list_type(entry);
    duckdb_destroy_logical_type(&entry);
    duckdb_destroy_logical_type(&lab);
    duckdb_destroy_logical_type(&big);
    duckdb_destroy_logical_type(&dbl);
    return out;
}

static bool register_label_cells(duckdb_connection connection) {
    return register_scores_set(connection, CELLS_NAME, cells_update, cells_finalize, cells_type);
}

/* ------------------------------------------------------------------ registration */

static const duckdb_type INT_TYPES[] = {
    DUCKDB_TYPE_TINYINT,  DUCKDB_TYPE_SMALLINT,  DUCKDB_TYPE_INTEGER,  DUCKDB_TYPE_BIGINT,
    DUCKDB_TYPE_UTINYINT, DUCKDB_TYPE_USMALLINT, DUCKDB_TYPE_UINTEGER, DUCKDB_TYPE_UBIGINT,
};

static duckdb_logical_type list_of(duckdb_type t) {
    duckdb_logical_type child = duckdb_create_logical_type(t);
    duckdb_logical_type list = duckdb_create_list_type(child);
    duckdb_destroy_logical_type(&child);
    return list;
}

static duckdb_logical_type counts_type(void) {
    duckdb_logical_type bigint = duckdb_create_logical_type(DUCKDB_TYPE_BIGINT);
    duckdb_logical_type members[3] = {bigint, bigint, bigint};
    const char *names[3] = {"tp", "n_actual", "n_predicted"};
    duckdb_logical_type out = duckdb_create_struct_type(members, names, 3);
    duckdb_destroy_logical_type(&bigint);
    return out;
}

/* Add the overload (list of ta, list of tp) to set; false on failure. */
static bool add_overload(duckdb_scalar_function_set set, duckdb_type ta, duckdb_type tp,
                         duckdb_logical_type ret) {
    duckdb_scalar_function f = duckdb_create_scalar_function();
    duckdb_scalar_function_set_name(f, "mlsql_native_counts");
    duckdb_logical_type la = list_of(ta), lp = list_of(tp);
    duckdb_scalar_function_add_parameter(f, la);
    duckdb_scalar_function_add_parameter(f, lp);
    duckdb_scalar_function_set_return_type(f, ret);
    duckdb_scalar_function_set_function(f, counts_function);
    bool ok = duckdb_add_scalar_function_to_set(set, f) == DuckDBSuccess;
    duckdb_destroy_logical_type(&la);
    duckdb_destroy_logical_type(&lp);
    duckdb_destroy_scalar_function(&f);
    return ok;
}

DUCKDB_EXTENSION_ENTRYPOINT(duckdb_connection connection, duckdb_extension_info info,
                            struct duckdb_extension_access *access) {
    duckdb_scalar_function_set set = duckdb_create_scalar_function_set("mlsql_native_counts");
    duckdb_logical_type ret = counts_type();
    bool ok = add_overload(set, DUCKDB_TYPE_VARCHAR, DUCKDB_TYPE_VARCHAR, ret);
    size_t n = sizeof INT_TYPES / sizeof INT_TYPES[0];
    for (size_t i = 0; ok && i < n; i++)
        for (size_t j = 0; ok && j < n; j++) ok = add_overload(set, INT_TYPES[i], INT_TYPES[j], ret);
    ok = ok && duckdb_register_scalar_function_set(connection, set) == DuckDBSuccess;
    duckdb_destroy_logical_type(&ret);
    duckdb_destroy_scalar_function_set(&set);
    if (!ok) {
        access->set_error(info, "mlsql: could not register mlsql_native_counts");
        return false;
    }
    ok = register_label_table(connection);
    if (!ok) {
        access->set_error(info, "mlsql: could not register mlsql_native_label_table");
        return false;
    }
    ok = register_label_scores(connection);
    if (!ok) {
        access->set_error(info, "mlsql: could not register " SCORES_NAME);
        return false;
    }
    ok = register_label_cells(connection);
    if (!ok) access->set_error(info, "mlsql: could not register " CELLS_NAME);
    return ok;
}
