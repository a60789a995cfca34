/*
 * mlsql's Polars expression plugin, in plain C (no Rust crates).
 *
 * Functions (each takes two list columns, actual and predicted):
 *   set_counts      -> Struct{tp, n_actual, n_predicted: Int64}
 *   set_tp          -> Int64  |A ∩ P|
 *   set_n_actual    -> Int64  |A|  (reads only A's elements)
 *   set_n_predicted -> Int64  |P|  (reads only P's elements)
 *   set_counts_packed -> Int128 tp + |A| * 2^42 + |P| * 2^84 (see OUT_PACKED)
 *   label_table     -> per call (an aggregation: one group's rows), one row holding a
 *                      LargeList of Struct{label, tp, n_actual, n_predicted, n}: each
 *                      label's counts (n 0), then each kind of known row (label NULL, the
 *                      row's tp, |A|, |P|, and n rows of that kind), then the unknown rows
 *                      if any (label and counts NULL, n of them). Built with label_table.h.
 *   label_table_rows -> the same table elementwise: as many rows as the input, the first
 *                      holding the table of the batch, the others empty lists.
 *   label_scores_pool, label_scores_labels, label_scores_rows (actual, scores[, weight]) ->
 *                      per call (an aggregation), one row holding the group's label-score
 *                      segment statistics (see "label scores" below; label_scores.h).
 * Labels are sets (duplicates count once, NULL elements are not labels) and a
 * row where either list is NULL gives NULL counts. set_counts' struct is never
 * NULL itself, only its fields (as polars' own pl.struct of the three).
 *
 * ABI: Polars' plugin interface version 0.1, as Polars calls it
 * (pola-rs/polars crates/polars-plan/.../function_expr/plugin.rs and
 * crates/polars-ffi/src/version_0.rs): `_polars_plugin_get_version`,
 * `_polars_plugin_get_last_error_message`, `_polars_plugin_field_<name>` and
 * `_polars_plugin_<name>`. Columns travel as the Arrow C data interface (the
 * public Arrow specification); Polars hands the inputs over to the plugin,
 * which must release them, and takes over the output's arrays.
 *
 * Inputs: List (int32 offsets) or LargeList (int64 offsets) of Utf8View,
 * Utf8, LargeUtf8 (and the binary equivalents), integers of any width and
 * sign, or Null; the all-NULL Null type at top level too. Any number of
 * chunks, chunked differently on the two sides, sliced arrays (array offsets),
 * validity bitmaps at any bit offset. Every buffer index is checked against
 * what the array itself declares (lengths, offsets, variadic buffer sizes);
 * inconsistent input is an error, never an out-of-bounds read.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel.h"
#include "label_scores.h" /* and label_table.h */

#if defined(_WIN32)
#define MLSQL_EXPORT __declspec(dllexport)
#define MLSQL_THREAD_LOCAL __declspec(thread)
#else
#define MLSQL_EXPORT __attribute__((visibility("default")))
#define MLSQL_THREAD_LOCAL __thread
#endif

/* ------------------------------------------------------------------ Arrow C data interface */
#ifndef ARROW_C_DATA_INTERFACE
#define ARROW_C_DATA_INTERFACE
#define ARROW_FLAG_NULLABLE 2
struct ArrowSchema {
    const char *format;
    const char *name;
    const char *metadata;
    int64_t flags;
    int64_t n_children;
    struct ArrowSchema **children;
    struct ArrowSchema *dictionary;
    void (*release)(struct ArrowSchema *);
    void *private_data;
};
struct ArrowArray {
    int64_t length;
    int64_t null_count;
    int64_t offset;
    int64_t n_buffers;
    int64_t n_children;
    const void **buffers;
    struct ArrowArray **children;
    struct ArrowArray *dictionary;
    void (*release)(struct ArrowArray *);
    void *private_data;
};
#endif

/* Polars' exported Series (polars-ffi version_0.rs). */
typedef struct SeriesExport {
    struct ArrowSchema *field;
    struct ArrowArray **arrays;
    size_t len;
    void (*release)(struct SeriesExport *);
    void *private_data;
} SeriesExport;

/* ------------------------------------------------------------------ errors */
static MLSQL_THREAD_LOCAL char last_error[512];

static void set_error(const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, args);
    va_end(args);
}

MLSQL_EXPORT uint32_t _polars_plugin_get_version(void) { return (0u << 16) | 1u; }

MLSQL_EXPORT const char *_polars_plugin_get_last_error_message(void) { return last_error; }

/* ------------------------------------------------------------------ input types */
typedef enum { ELEM_NULL, ELEM_VIEW, ELEM_TEXT32, ELEM_TEXT64, ELEM_INT } elem_kind;

typedef struct {
    int top_null;  /* the whole column is of type Null: every row NULL */
    int large;     /* list offsets are int64 (LargeList) rather than int32 */
    elem_kind kind;
    int width;     /* integer width in bytes */
    int is_signed; /* integer signedness */
} col_type;

static int parse_type(const struct ArrowSchema *s, col_type *t, const char *side) {
    memset(t, 0, sizeof *t);
    if (s == NULL || s->format == NULL) {
        set_error("mlsql plugin: %s has no Arrow type", side);
        return -1;
    }
    if (strcmp(s->format, "n") == 0) {
        t->top_null = 1;
        t->kind = ELEM_NULL;
        return 0;
    }
    if (strcmp(s->format, "+l") == 0) {
        t->large = 0;
    } else if (strcmp(s->format, "+L") == 0) {
        t->large = 1;
    } else {
        set_error("mlsql plugin: %s must be a list, got Arrow format '%s'", side, s->format);
        return -1;
    }
    if (s->n_children != 1 || s->children == NULL || s->children[0] == NULL ||
        s->children[0]->format == NULL || s->children[0]->dictionary != NULL) {
        set_error("mlsql plugin: %s is a list without a plain element type", side);
        return -1;
    }
    const char *f = s->children[0]->format;
    static const struct {
        const char *format;
        elem_kind kind;
        int width, is_signed;
    } known[] = {
        {"vu", ELEM_VIEW, 0, 0},   {"vz", ELEM_VIEW, 0, 0},   {"u", ELEM_TEXT32, 0, 0},
        {"z", ELEM_TEXT32, 0, 0},  {"U", ELEM_TEXT64, 0, 0},  {"Z", ELEM_TEXT64, 0, 0},
        {"c", ELEM_INT, 1, 1},     {"C", ELEM_INT, 1, 0},     {"s", ELEM_INT, 2, 1},
        {"S", ELEM_INT, 2, 0},     {"i", ELEM_INT, 4, 1},     {"I", ELEM_INT, 4, 0},
        {"l", ELEM_INT, 8, 1},     {"L", ELEM_INT, 8, 0},     {"n", ELEM_NULL, 0, 0},
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        if (strcmp(f, known[i].format) == 0) {
            t->kind = known[i].kind;
            t->width = known[i].width;
            t->is_signed = known[i].is_signed;
            return 0;
        }
    }
    set_error("mlsql plugin: %s holds elements of unsupported Arrow format '%s'", side, f);
    return -1;
}

static int is_text(elem_kind k) { return k == ELEM_VIEW || k == ELEM_TEXT32 || k == ELEM_TEXT64; }

/* ------------------------------------------------------------------ chunk checks */
static int bit(const uint8_t *bits, int64_t i) { return (bits[i >> 3] >> (i & 7)) & 1; }

/* One list chunk, checked once: what a row lookup needs. */
typedef struct {
    const struct ArrowArray *list;
    const struct ArrowArray *child;
    const uint8_t *validity;       /* list validity, or NULL */
    const uint8_t *child_validity; /* element validity, or NULL */
    const void *offsets;           /* list offsets */
    const void *values;            /* ints, views or text offsets */
    const char *data;              /* Utf8/LargeUtf8 data */
    int64_t data_lo, data_hi;      /* text offsets that may be read: [lo, hi] */
    const char **variadic;         /* Utf8View data buffers */
    const int64_t *variadic_size;
    int64_t n_variadic;
} chunk_view;

static int check_array(const struct ArrowArray *a, const char *side) {
    if (a == NULL || a->release == NULL || a->length < 0 || a->offset < 0 ||
        a->length > INT64_MAX - a->offset - 1) {
        set_error("mlsql plugin: %s has an invalid or released Arrow array", side);
        return -1;
    }
    return 0;
}

static int open_elements(const struct ArrowArray *c, const col_type *t, chunk_view *v,
                         const char *side);

static int open_chunk(const struct ArrowArray *a, const col_type *t, chunk_view *v,
                      const char *side) {
    memset(v, 0, sizeof *v);
    v->list = a;
    if (check_array(a, side) != 0) return -1;
    if (t->top_null) return 0;
    if (a->n_buffers != 2 || a->buffers == NULL || a->n_children != 1 || a->children == NULL) {
        set_error("mlsql plugin: %s is not a well-formed list array", side);
        return -1;
    }
    v->validity = (const uint8_t *)a->buffers[0];
    v->offsets = a->buffers[1];
    if (a->length > 0 && v->offsets == NULL) {
        set_error("mlsql plugin: %s list array has no offsets", side);
        return -1;
    }
    return open_elements(a->children[0], t, v, side);
}

/* The element array c of type t (a list's child, or a label field of a struct) into v: its
 * validity and the buffers its elements are read from. */
static int open_elements(const struct ArrowArray *c, const col_type *t, chunk_view *v,
                         const char *side) {
    v->child = c;
    if (check_array(c, side) != 0) return -1;
    if (t->kind == ELEM_NULL) return 0;
    if (c->buffers == NULL) goto malformed;
    v->child_validity = c->n_buffers > 0 ? (const uint8_t *)c->buffers[0] : NULL;
    switch (t->kind) {
    case ELEM_INT:
        if (c->n_buffers != 2) goto malformed;
        v->values = c->buffers[1];
        if (c->length > 0 && v->values == NULL) goto malformed;
        break;
    case ELEM_TEXT32:
    case ELEM_TEXT64:
        if (c->n_buffers != 3) goto malformed;
        v->values = c->buffers[1];
        v->data = (const char *)c->buffers[2];
        if (v->values == NULL) {
            if (c->length > 0) goto malformed;
            break;
        }
        /* the text offsets this child may use: from its first to its last element */
        if (t->kind == ELEM_TEXT32) {
            v->data_lo = ((const int32_t *)v->values)[c->offset];
            v->data_hi = ((const int32_t *)v->values)[c->offset + c->length];
        } else {
            v->data_lo = ((const int64_t *)v->values)[c->offset];
            v->data_hi = ((const int64_t *)v->values)[c->offset + c->length];
        }
        if (v->data_lo < 0 || v->data_hi < v->data_lo || (v->data_hi > 0 && v->data == NULL))
            goto malformed;
        break;
    case ELEM_VIEW:
        /* validity, views, the data buffers, then one int64 size per data buffer */
        if (c->n_buffers < 3) goto malformed;
        v->values = c->buffers[1];
        if (c->length > 0 && v->values == NULL) goto malformed;
        v->n_variadic = c->n_buffers - 3;
        v->variadic = (const char **)(c->buffers + 2);
        v->variadic_size = (const int64_t *)c->buffers[c->n_buffers - 1];
        if (v->n_variadic > 0 && v->variadic_size == NULL) goto malformed;
        break;
    default:
        break;
    }
    return 0;
malformed:
    set_error("mlsql plugin: %s has a malformed element array", side);
    return -1;
}

/* ------------------------------------------------------------------ one row's labels */
typedef struct {
    mlsql_text *text;
    int64_t *ints;
    size_t n, text_cap, ints_cap;
} items;

/* The capacity to grow `cap` to for `n` items of `size` bytes (0: too large). */
static size_t grown(size_t cap, size_t n, size_t size) {
    size_t want = cap ? cap : 64;
    while (want < n) {
        if (want > SIZE_MAX / 2) return 0;
        want *= 2;
    }
    return want > SIZE_MAX / size ? 0 : want;
}

static int reserve(items *it, size_t n, int text) {
    if (text && n > it->text_cap) {
        size_t cap = grown(it->text_cap, n, sizeof(mlsql_text));
        mlsql_text *p = cap ? (mlsql_text *)realloc(it->text, cap * sizeof *p) : NULL;
        if (p == NULL) return -1;
        it->text = p;
        it->text_cap = cap;
    } else if (!text && n > it->ints_cap) {
        size_t cap = grown(it->ints_cap, n, sizeof(int64_t));
        int64_t *p = cap ? (int64_t *)realloc(it->ints, cap * sizeof *p) : NULL;
        if (p == NULL) return -1;
        it->ints = p;
        it->ints_cap = cap;
    }
    return 0;
}

static void items_free(items *it) {
    free(it->text);
    free(it->ints);
    memset(it, 0, sizeof *it);
}

/* Integer elements as int64. `big` collects UInt64 values above INT64_MAX when the
 * other side cannot hold them (they count as labels but can match nothing there). */
static int64_t read_int(const chunk_view *v, const col_type *t, int64_t k, int *too_big) {
    const void *p = v->values;
    *too_big = 0;
    switch (t->width) {
    case 1:
        return t->is_signed ? (int64_t)((const int8_t *)p)[k] : (int64_t)((const uint8_t *)p)[k];
    case 2:
        return t->is_signed ? (int64_t)((const int16_t *)p)[k] : (int64_t)((const uint16_t *)p)[k];
    case 4:
        return t->is_signed ? (int64_t)((const int32_t *)p)[k] : (int64_t)((const uint32_t *)p)[k];
    default:
        if (t->is_signed) return ((const int64_t *)p)[k];
        {
            uint64_t u = ((const uint64_t *)p)[k];
            *too_big = u > (uint64_t)INT64_MAX;
            return (int64_t)u;
        }
    }
}

/* Row `row` of chunk v spans the child's logical elements [*start, *end): checked against the
 * child's length. */
static MLSQL_ALWAYS_INLINE int row_span(const chunk_view *v, const col_type *t, int64_t row, int64_t *start,
                    int64_t *end, const char *side) {
    int64_t i = v->list->offset + row;
    if (t->large) {
        *start = ((const int64_t *)v->offsets)[i];
        *end = ((const int64_t *)v->offsets)[i + 1];
    } else {
        *start = ((const int32_t *)v->offsets)[i];
        *end = ((const int32_t *)v->offsets)[i + 1];
    }
    if (*start < 0 || *end < *start || *end > v->child->length) {
        set_error("mlsql plugin: %s has list offsets outside its elements", side);
        return -1;
    }
    return 0;
}

/* Element k (a physical index into v's element array, not NULL) appended to out: text as
 * (pointer, length), integers as int64 (*too_big: a UInt64 above INT64_MAX). out has room. */
static MLSQL_ALWAYS_INLINE int read_element(const chunk_view *v, const col_type *t, int64_t k,
                                            items *out, int *too_big, const char *side) {
    *too_big = 0;
    switch (t->kind) {
    case ELEM_INT:
        out->ints[out->n++] = read_int(v, t, k, too_big);
        return 0;
    case ELEM_TEXT32:
    case ELEM_TEXT64: {
        int64_t s, e;
        if (t->kind == ELEM_TEXT32) {
            s = ((const int32_t *)v->values)[k];
            e = ((const int32_t *)v->values)[k + 1];
        } else {
            s = ((const int64_t *)v->values)[k];
            e = ((const int64_t *)v->values)[k + 1];
        }
        if (s < v->data_lo || e < s || e > v->data_hi) {
            set_error("mlsql plugin: %s has text offsets outside its data", side);
            return -1;
        }
        out->text[out->n++] = mlsql_text_make(v->data + s, (size_t)(e - s));
        return 0;
    }
    case ELEM_VIEW: {
        const uint8_t *view = (const uint8_t *)v->values + 16 * k;
        int32_t len, index, offset;
        memcpy(&len, view, 4);
        if (len < 0) goto bad_view;
        const char *at;
        if (len <= 12) {
            at = (const char *)view + 4;
        } else {
            memcpy(&index, view + 8, 4);
            memcpy(&offset, view + 12, 4);
            if (index < 0 || index >= v->n_variadic || offset < 0 ||
                (int64_t)offset + len > v->variadic_size[index] || v->variadic[index] == NULL)
                goto bad_view;
            at = v->variadic[index] + offset;
        }
        /* 8 readable bytes: 12 in the view, or a label longer than 12 */
        out->text[out->n++] = mlsql_text_make_padded(at, (size_t)len);
        return 0;
    bad_view:
        set_error("mlsql plugin: %s has a string view outside its data buffers", side);
        return -1;
    }
    default:
        return 0;
    }
}

/* Gather the non-NULL elements of row `row` of chunk `v` (NULL rows are handled by the
 * caller). `split_big`: put UInt64 values above INT64_MAX into `big` instead of `out`. */
static int gather(const chunk_view *v, const col_type *t, int64_t row, items *out, items *big,
                  int split_big, const char *side) {
    int64_t start, end;
    if (row_span(v, t, row, &start, &end, side) != 0) return -1;
    const struct ArrowArray *c = v->child;
    if (t->kind == ELEM_NULL || end == start) return 0;
    size_t n = (size_t)(end - start);
    if (reserve(out, out->n + n, is_text(t->kind)) != 0 ||
        (split_big && reserve(big, big->n + n, 0) != 0)) {
        set_error("mlsql plugin: out of memory");
        return -1;
    }
    for (int64_t j = start; j < end; j++) {
        int64_t k = c->offset + j; /* physical element index */
        if (v->child_validity != NULL && !bit(v->child_validity, k)) continue;
        int too_big;
        if (read_element(v, t, k, out, &too_big, side) != 0) return -1;
        if (too_big && split_big) big->ints[big->n++] = out->ints[--out->n];
    }
    return 0;
}

/* ------------------------------------------------------------------ walking the chunks */
typedef struct {
    const SeriesExport *s;
    const col_type *t;
    const char *side;
    size_t chunk;   /* current chunk */
    int64_t row;    /* row within it */
    int64_t total;  /* rows over all chunks */
    int broadcast;  /* one row, repeated */
    chunk_view view;
    int want_keys;  /* count this side's rows on integer keys where it can (row_keys) */
} cursor;

static int cursor_open(cursor *c, const SeriesExport *s, const col_type *t, const char *side) {
    memset(c, 0, sizeof *c);
    c->s = s;
    c->t = t;
    c->side = side;
    if (s->len > 0 && s->arrays == NULL) {
        set_error("mlsql plugin: %s has no chunks", side);
        return -1;
    }
    for (size_t i = 0; i < s->len; i++) {
        if (check_array(s->arrays[i], side) != 0) return -1;
        c->total += s->arrays[i]->length;
    }
    return 0;
}

/* Point the cursor at a real row: skip to the next non-empty chunk, opening it. */
static int cursor_settle(cursor *c) {
    while (c->chunk < c->s->len) {
        const struct ArrowArray *a = c->s->arrays[c->chunk];
        if (c->row < a->length) {
            if (c->view.list != a && open_chunk(a, c->t, &c->view, c->side) != 0) return -1;
            return 0;
        }
        c->chunk++;
        c->row = 0;
    }
    set_error("mlsql plugin: %s has fewer rows than expected", c->side);
    return -1;
}

/* Move to the next row (a broadcast cursor stays on its one row). */
static int cursor_next(cursor *c, int64_t r) {
    if (r > 0) {
        if (c->broadcast) return 0;
        c->row++;
    }
    return cursor_settle(c);
}

static int row_is_null(const cursor *c) {
    if (c->t->top_null) return 1;
    const uint8_t *valid = c->view.validity;
    return valid != NULL && !bit(valid, c->view.list->offset + c->row);
}

/* ------------------------------------------------------------------ output arrays */
typedef struct {
    void *buffers_mem[2];
    const void *buffers[2];
    struct ArrowArray *children[3];
} owned_array;

static void release_array(struct ArrowArray *a) {
    if (a == NULL || a->release == NULL) return;
    owned_array *o = (owned_array *)a->private_data;
    for (int64_t i = 0; i < a->n_children; i++) {
        struct ArrowArray *child = o->children[i];
        if (child != NULL) {
            if (child->release != NULL) child->release(child);
            free(child);
        }
    }
    free(o->buffers_mem[0]);
    free(o->buffers_mem[1]);
    free(o);
    a->release = NULL;
}

/* An Int64 array (or, with values == NULL, a struct shell) owning `validity` and `values`. */
static int make_array(struct ArrowArray *a, int64_t length, int64_t null_count, uint8_t *validity,
                      int64_t *values, int n_children) {
    owned_array *o = (owned_array *)calloc(1, sizeof *o);
    if (o == NULL) return -1;
    o->buffers_mem[0] = validity;
    o->buffers_mem[1] = values;
    o->buffers[0] = null_count > 0 ? validity : NULL;
    o->buffers[1] = values;
    memset(a, 0, sizeof *a);
    a->length = length;
    a->null_count = null_count;
    a->n_buffers = n_children ? 1 : 2;
    a->buffers = o->buffers;
    a->n_children = n_children;
    a->children = n_children ? o->children : NULL;
    a->release = release_array;
    a->private_data = o;
    return 0;
}

typedef struct {
    char *format;
    char *name;
    struct ArrowSchema *children[7];
} owned_schema;

static void release_schema(struct ArrowSchema *s) {
    if (s == NULL || s->release == NULL) return;
    owned_schema *o = (owned_schema *)s->private_data;
    for (int64_t i = 0; i < s->n_children; i++) {
        struct ArrowSchema *child = o->children[i];
        if (child != NULL) {
            if (child->release != NULL) child->release(child);
            free(child);
        }
    }
    free(o->format);
    free(o->name);
    free(o);
    s->release = NULL;
}

static char *copy_string(const char *s) {
    size_t n = strlen(s) + 1;
    char *out = (char *)malloc(n);
    if (out != NULL) memcpy(out, s, n);
    return out;
}

static int make_schema(struct ArrowSchema *s, const char *format, const char *name,
                       int n_children) {
    owned_schema *o = (owned_schema *)calloc(1, sizeof *o);
    if (o == NULL) return -1;
    o->format = copy_string(format);
    o->name = copy_string(name ? name : "");
    memset(s, 0, sizeof *s);
    s->format = o->format;
    s->name = o->name;
    s->flags = ARROW_FLAG_NULLABLE;
    s->n_children = n_children;
    s->children = n_children ? o->children : NULL;
    s->release = release_schema;
    s->private_data = o;
    if (o->format == NULL || o->name == NULL) {
        release_schema(s);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------ functions */
enum { OUT_COUNTS, OUT_TP, OUT_N_ACTUAL, OUT_N_PREDICTED, OUT_PACKED };

/* set_counts_packed: a row's tp, |A| and |P| in one Int128, tp + |A| * 2^42 + |P| * 2^84, so a
 * micro measure sums one column, computing the counts once (Polars' streaming engine evaluates
 * a struct's fields once per use). mlsql/polars/_native.py unpacks the sum; it is exact while
 * every field's sum stays below 2^42, which the caller checks (PACKED_BITS there). */
#define MLSQL_PACKED_BITS 42
#define MLSQL_PACKED_MAX ((INT64_C(1) << MLSQL_PACKED_BITS) - 1)
static const char *const FIELD_NAMES[3] = {"tp", "n_actual", "n_predicted"};

static int output_schema(struct ArrowSchema *out, int what, const char *name) {
    /* "_pli128": Polars' Arrow format of its Int128 (16 bytes a value, native byte order) */
    if (what == OUT_PACKED) return make_schema(out, "_pli128", name, 0);
    if (what != OUT_COUNTS) return make_schema(out, "l", name, 0);
    if (make_schema(out, "+s", name, 3) != 0) return -1;
    owned_schema *o = (owned_schema *)out->private_data;
    for (int i = 0; i < 3; i++) {
        o->children[i] = (struct ArrowSchema *)malloc(sizeof(struct ArrowSchema));
        if (o->children[i] == NULL || make_schema(o->children[i], "l", FIELD_NAMES[i], 0) != 0) {
            free(o->children[i]);
            o->children[i] = NULL;
            release_schema(out);
            return -1;
        }
    }
    return 0;
}

static int check_inputs(const struct ArrowSchema *a, const struct ArrowSchema *p, col_type *ta,
                        col_type *tp) {
    if (parse_type(a, ta, "actual") != 0 || parse_type(p, tp, "predicted") != 0) return -1;
    if ((is_text(ta->kind) && tp->kind == ELEM_INT) || (ta->kind == ELEM_INT && is_text(tp->kind))) {
        set_error("mlsql plugin: actual and predicted hold different kinds of labels "
                  "(both text or both integers)");
        return -1;
    }
    return 0;
}

static void field_function(const struct ArrowSchema *fields, size_t n, struct ArrowSchema *out,
                           int what) {
    col_type ta, tp;
    if (fields == NULL || n != 2) {
        set_error("mlsql plugin: takes two list columns (actual, predicted), got %zu", n);
        return;
    }
    if (check_inputs(&fields[0], &fields[1], &ta, &tp) != 0) return;
    if (output_schema(out, what, fields[0].name) != 0) set_error("mlsql plugin: out of memory");
}

/* Release what Polars handed over: every chunk, then the Series export itself. */
static void release_inputs(const SeriesExport *inputs, size_t n) {
    for (size_t i = 0; i < n; i++) {
        SeriesExport e = inputs[i];
        for (size_t c = 0; c < e.len && e.arrays != NULL; c++) {
            struct ArrowArray *a = e.arrays[c];
            if (a != NULL && a->release != NULL) a->release(a);
        }
        if (e.release != NULL) e.release(&e);
    }
}

typedef struct {
    struct ArrowSchema schema;
    struct ArrowArray *array_ptrs[1];
    struct ArrowArray array;
} owned_series;

/* Polars has moved the arrays out (it releases them); the schema and boxes are ours. */
static void release_series(SeriesExport *e) {
    if (e == NULL || e->release == NULL) return;
    owned_series *o = (owned_series *)e->private_data;
    if (o->schema.release != NULL) o->schema.release(&o->schema);
    free(o);
    e->release = NULL;
}

/* Integer keys: integer labels, and text views whose labels all have at most
 * MLSQL_SHORT_TEXT_MAX bytes, are counted as int64 keys (mlsql_count_int: straight-line code for
 * rows of up to 8 labels a side) instead of (pointer, length, head) triples; the DuckDB
 * extension does the same. Two keys are equal exactly when the labels are (integers widened
 * exactly, UInt64 bit patterns only ever against UInt64; short text: mlsql_short_text_key).
 *
 * The current row's non-NULL labels as keys: Int64 lists without NULL elements in place, else
 * into tmp. 1 (nothing written that matters) when a text label is too long for a key: the row
 * then takes the text path. */
static MLSQL_ALWAYS_INLINE int row_keys(const cursor *c, items *tmp, const int64_t **keys, size_t *n) {
    const chunk_view *v = &c->view;
    const col_type *t = c->t;
    int64_t start, end;
    if (row_span(v, t, c->row, &start, &end, c->side) != 0) return -1;
    size_t len = (size_t)(end - start);
    int64_t off = v->child->offset + start; /* the row's first physical element */
    const uint8_t *valid = v->child_validity;
    if (t->kind == ELEM_INT && t->width == 8 && valid == NULL) {
        *keys = len ? (const int64_t *)v->values + off : NULL;
        *n = len;
        return 0;
    }
    if (len > tmp->ints_cap && reserve(tmp, len, 0) != 0) {
        set_error("mlsql plugin: out of memory");
        return -1;
    }
    int64_t *out = tmp->ints;
    size_t k = 0;
    if (t->kind == ELEM_INT) {
        for (size_t j = 0; j < len; j++) {
            int64_t at = off + (int64_t)j, x;
            if (valid != NULL && !bit(valid, at)) continue;
            switch (t->width * 2 + t->is_signed) {
            case 2: x = ((const uint8_t *)v->values)[at]; break;
            case 3: x = ((const int8_t *)v->values)[at]; break;
            case 4: x = ((const uint16_t *)v->values)[at]; break;
            case 5: x = ((const int16_t *)v->values)[at]; break;
            case 8: x = ((const uint32_t *)v->values)[at]; break;
            case 9: x = ((const int32_t *)v->values)[at]; break;
            default: x = ((const int64_t *)v->values)[at]; /* UInt64: bit patterns */
            }
            out[k++] = x;
        }
    } else { /* ELEM_VIEW */
        const uint8_t *view = (const uint8_t *)v->values + 16 * off;
        for (size_t j = 0; j < len; j++, view += 16) {
            int32_t size;
            memcpy(&size, view, 4);
            /* a NULL element's view may hold anything: it is skipped before it is read */
            int keep = valid == NULL || bit(valid, off + (int64_t)j);
            if (MLSQL_RARELY((uint32_t)size > MLSQL_SHORT_TEXT_MAX)) {
                if (keep) return 1;
                size = 0;
            }
            /* 8 readable bytes at view + 4: a short label's view holds 12 inlined bytes */
            out[k] = mlsql_short_text_key(
                mlsql_head8_padded((const char *)view + 4, (size_t)size), (size_t)size);
            k += (size_t)keep;
        }
    }
    *keys = out;
    *n = k;
    return 0;
}

static int count_row(cursor *ca, cursor *cp, const col_type *ta, const col_type *tp, int what,
                     items *ia, items *ip, items *big, mlsql_scratch *scratch, mlsql_counts *out) {
    if (ca->want_keys || cp->want_keys) {
        const int64_t *ka = NULL, *kp = NULL;
        size_t na = 0, np = 0;
        int rc = ca->want_keys ? row_keys(ca, ia, &ka, &na) : 0;
        if (rc == 0 && cp->want_keys) rc = row_keys(cp, ip, &kp, &np);
        if (rc < 0) return -1;
        if (rc == 0) {
            if (mlsql_count_int(ka, na, kp, np, scratch, out) != 0) {
                set_error("mlsql plugin: out of memory");
                return -1;
            }
            return 0;
        } /* a long text label: the row takes the text path */
    }
    int text = is_text(ta->kind) || is_text(tp->kind);
    /* one side UInt64, the other not: values above INT64_MAX cannot match, count them apart */
    int split_a = ta->kind == ELEM_INT && tp->kind == ELEM_INT && ta->width == 8 &&
                  !ta->is_signed && !(tp->width == 8 && !tp->is_signed);
    int split_p = ta->kind == ELEM_INT && tp->kind == ELEM_INT && tp->width == 8 &&
                  !tp->is_signed && !(ta->width == 8 && !ta->is_signed);
    mlsql_counts extra = {0, 0, 0};
    ia->n = ip->n = 0;
    if (what != OUT_N_PREDICTED) {
        big->n = 0;
        if (gather(&ca->view, ta, ca->row, ia, big, split_a, "actual") != 0) return -1;
        if (big->n > 0) {
            mlsql_counts c;
            if (mlsql_count_int(big->ints, big->n, NULL, 0, scratch, &c) != 0) goto oom;
            extra.n_actual = c.n_actual;
        }
    }
    if (what != OUT_N_ACTUAL) {
        big->n = 0;
        if (gather(&cp->view, tp, cp->row, ip, big, split_p, "predicted") != 0) return -1;
        if (big->n > 0) {
            mlsql_counts c;
            if (mlsql_count_int(NULL, 0, big->ints, big->n, scratch, &c) != 0) goto oom;
            extra.n_predicted = c.n_predicted;
        }
    }
    int rc = text ? mlsql_count_text(ia->text, ia->n, ip->text, ip->n, scratch, out)
                  : mlsql_count_int(ia->ints, ia->n, ip->ints, ip->n, scratch, out);
    if (rc != 0) goto oom;
    out->n_actual += extra.n_actual;
    out->n_predicted += extra.n_predicted;
    return 0;
oom:
    set_error("mlsql plugin: out of memory");
    return -1;
}

static int compute(const SeriesExport *inputs, size_t n, SeriesExport *out, int what) {
    col_type ta, tp;
    cursor ca, cp;
    if (inputs == NULL || n != 2) {
        set_error("mlsql plugin: takes two list columns (actual, predicted), got %zu", n);
        return -1;
    }
    if (check_inputs(inputs[0].field, inputs[1].field, &ta, &tp) != 0) return -1;
    if (cursor_open(&ca, &inputs[0], &ta, "actual") != 0 ||
        cursor_open(&cp, &inputs[1], &tp, "predicted") != 0)
        return -1;
    /* keys where both sides can have them: integers that need no UInt64 split (count_row), or
     * text views on both sides; only the sides this function reads */
    int u64_a = ta.kind == ELEM_INT && ta.width == 8 && !ta.is_signed;
    int u64_p = tp.kind == ELEM_INT && tp.width == 8 && !tp.is_signed;
    int keyable = (ta.kind == ELEM_INT && tp.kind == ELEM_INT && u64_a == u64_p) ||
                  (ta.kind == ELEM_VIEW && tp.kind == ELEM_VIEW);
    ca.want_keys = keyable && what != OUT_N_PREDICTED;
    cp.want_keys = keyable && what != OUT_N_ACTUAL;
    int64_t length = ca.total;
    if (ca.total != cp.total) {
        if (ca.total == 1) {
            ca.broadcast = 1;
            length = cp.total;
        } else if (cp.total == 1) {
            cp.broadcast = 1;
        } else {
            set_error("mlsql plugin: actual has %lld rows and predicted %lld",
                      (long long)ca.total, (long long)cp.total);
            return -1;
        }
    }
    if ((uint64_t)length > SIZE_MAX / sizeof(int64_t) / 3) {
        set_error("mlsql plugin: too many rows");
        return -1;
    }
    size_t n_rows = (size_t)length, n_bytes = (n_rows + 7) / 8;
    int n_out = what == OUT_COUNTS ? 3 : 1;
    int64_t *values[3] = {NULL, NULL, NULL};
    uint8_t *validity[3] = {NULL, NULL, NULL};
    items ia = {0}, ip = {0}, big = {0};
    mlsql_scratch scratch = {0};
    int64_t nulls = 0;
    owned_series *series = NULL;
    size_t words = what == OUT_PACKED ? 2 : 1; /* int64 words a value */
    for (int f = 0; f < n_out; f++) {
        values[f] = (int64_t *)malloc(n_rows ? n_rows * words * sizeof(int64_t) : 1);
        validity[f] = (uint8_t *)calloc(n_bytes ? n_bytes : 1, 1);
        if (values[f] == NULL || validity[f] == NULL) goto oom;
    }
    /* runs of rows within one chunk of each side: the cursors settle once a run, not a row */
    for (int64_t r = 0, run = 0; r < length; r++, run--) {
        if (r > 0) {
            ca.row += !ca.broadcast;
            cp.row += !cp.broadcast;
        }
        if (run == 0) {
            if (cursor_settle(&ca) != 0 || cursor_settle(&cp) != 0) goto fail;
            run = length - r;
            if (!ca.broadcast && ca.view.list->length - ca.row < run)
                run = ca.view.list->length - ca.row;
            if (!cp.broadcast && cp.view.list->length - cp.row < run)
                run = cp.view.list->length - cp.row;
        }
        if (row_is_null(&ca) || row_is_null(&cp)) {
            if (what == OUT_PACKED)
                values[0][2 * r] = values[0][2 * r + 1] = 0;
            else
                for (int f = 0; f < n_out; f++) values[f][r] = 0;
            nulls++;
            continue;
        }
        mlsql_counts c = {0, 0, 0};
        if (count_row(&ca, &cp, &ta, &tp, what, &ia, &ip, &big, &scratch, &c) != 0) goto fail;
        if (what == OUT_PACKED) {
            if (c.n_actual > MLSQL_PACKED_MAX || c.n_predicted > MLSQL_PACKED_MAX) {
                set_error("mlsql plugin: a row holds 2^%d labels or more", MLSQL_PACKED_BITS);
                goto fail;
            }
            uint64_t tp_ = (uint64_t)c.tp, na = (uint64_t)c.n_actual, np = (uint64_t)c.n_predicted;
            uint64_t lo = tp_ | na << MLSQL_PACKED_BITS;
            uint64_t hi = na >> (64 - MLSQL_PACKED_BITS) | np << (2 * MLSQL_PACKED_BITS - 64);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
            values[0][2 * r] = (int64_t)hi;
            values[0][2 * r + 1] = (int64_t)lo;
#else
            values[0][2 * r] = (int64_t)lo;
            values[0][2 * r + 1] = (int64_t)hi;
#endif
            validity[0][r >> 3] |= (uint8_t)(1u << (r & 7));
            continue;
        }
        int64_t got[3] = {c.tp, c.n_actual, c.n_predicted};
        for (int f = 0; f < n_out; f++) {
            values[f][r] = what == OUT_COUNTS ? got[f] : got[what - 1];
            validity[f][r >> 3] |= (uint8_t)(1u << (r & 7));
        }
    }
    series = (owned_series *)calloc(1, sizeof *series);
    if (series == NULL) goto oom;
    if (output_schema(&series->schema, what, inputs[0].field->name) != 0) goto oom;
    if (what == OUT_COUNTS) {
        /* the struct is never NULL itself (as pl.struct): its fields are */
        if (make_array(&series->array, length, 0, NULL, NULL, 3) != 0) goto oom;
        owned_array *o = (owned_array *)series->array.private_data;
        for (int f = 0; f < 3; f++) {
            o->children[f] = (struct ArrowArray *)malloc(sizeof(struct ArrowArray));
            if (o->children[f] == NULL ||
                make_array(o->children[f], length, nulls, validity[f], values[f], 0) != 0) {
                free(o->children[f]);
                o->children[f] = NULL;
                goto oom;
            }
            validity[f] = NULL;
            values[f] = NULL;
        }
    } else {
        if (make_array(&series->array, length, nulls, validity[0], values[0], 0) != 0) goto oom;
        validity[0] = NULL;
        values[0] = NULL;
    }
    series->array_ptrs[0] = &series->array;
    out->field = &series->schema;
    out->arrays = series->array_ptrs;
    out->len = 1;
    out->release = release_series;
    out->private_data = series;
    items_free(&ia);
    items_free(&ip);
    items_free(&big);
    mlsql_scratch_free(&scratch);
    return 0;
oom:
    set_error("mlsql plugin: out of memory");
fail:
    if (series != NULL) {
        if (series->array.release != NULL) series->array.release(&series->array);
        if (series->schema.release != NULL) series->schema.release(&series->schema);
        free(series);
    }
    for (int f = 0; f < 3; f++) {
        free(values[f]);
        free(validity[f]);
    }
    items_free(&ia);
    items_free(&ip);
    items_free(&big);
    mlsql_scratch_free(&scratch);
    return -1;
}

/* A function Polars calls: _polars_plugin_field_<name> runs `field` (the output type of the
 * input types `fields`, `n` of them, into `out`), _polars_plugin_<name> runs `compute` (the
 * output series of the `n` series `inputs` into `out`), then releases the inputs. Neither
 * reads kwargs. An error leaves `out` empty and its message in last_error. */
#define MLSQL_PLUGIN_FUNCTION(name, field, compute)                                               \
    MLSQL_EXPORT void _polars_plugin_field_##name(const struct ArrowSchema *fields, size_t n,     \
                                                  struct ArrowSchema *out, const uint8_t *kwargs, \
                                                  size_t kwargs_len) {                            \
        (void)kwargs;                                                                             \
        (void)kwargs_len;                                                                         \
        last_error[0] = '\0';                                                                     \
        field;                                                                                    \
    }                                                                                             \
    MLSQL_EXPORT void _polars_plugin_##name(const SeriesExport *inputs, size_t n,                 \
                                            const uint8_t *kwargs, size_t kwargs_len,             \
                                            SeriesExport *out, const void *context) {             \
        (void)kwargs;                                                                             \
        (void)kwargs_len;                                                                         \
        (void)context;                                                                            \
        last_error[0] = '\0';                                                                     \
        compute;                                                                                  \
        release_inputs(inputs, n);                                                                \
    }

/* ------------------------------------------------------------------ label_table */
typedef struct {
    void *mem[3];
    const void *buffers[3];
    struct ArrowArray *children[7];
} lt_array;

static void lt_release_array(struct ArrowArray *a) {
    if (a == NULL || a->release == NULL) return;
    lt_array *o = (lt_array *)a->private_data;
    for (int64_t i = 0; i < a->n_children; i++) {
        struct ArrowArray *child = o->children[i];
        if (child != NULL) {
            if (child->release != NULL) child->release(child);
            free(child);
        }
    }
    for (int i = 0; i < 3; i++) free(o->mem[i]);
    free(o);
    a->release = NULL;
}

/* An array owning the n_buffers buffers `mem` (freed here on failure too). */
static int lt_make_array(struct ArrowArray *a, int64_t length, int64_t null_count, int n_buffers,
                         void *mem[3], int n_children) {
    lt_array *o = (lt_array *)calloc(1, sizeof *o);
    if (o == NULL) {
        for (int i = 0; i < n_buffers; i++) free(mem[i]);
        return -1;
    }
    for (int i = 0; i < n_buffers; i++) {
        o->mem[i] = mem[i];
        o->buffers[i] = mem[i];
    }
    if (null_count == 0) o->buffers[0] = NULL;
    memset(a, 0, sizeof *a);
    a->length = length;
    a->null_count = null_count;
    a->n_buffers = n_buffers;
    a->buffers = o->buffers;
    a->n_children = n_children;
    a->children = n_children ? o->children : NULL;
    a->release = lt_release_array;
    a->private_data = o;
    return 0;
}

static const char *const LT_FIELDS[5] = {"label", "tp", "n_actual", "n_predicted", "n"};

/* The output type: LargeList<Struct{label, tp, n_actual, n_predicted, n}>. */
static int lt_schema(struct ArrowSchema *out, const char *label_format, const char *name) {
    if (make_schema(out, "+L", name, 1) != 0) return -1;
    owned_schema *o = (owned_schema *)out->private_data;
    struct ArrowSchema *item = (struct ArrowSchema *)malloc(sizeof *item);
    if (item == NULL || make_schema(item, "+s", "item", 5) != 0) {
        free(item);
        release_schema(out);
        return -1;
    }
    o->children[0] = item;
    owned_schema *oi = (owned_schema *)item->private_data;
    for (int i = 0; i < 5; i++) {
        oi->children[i] = (struct ArrowSchema *)malloc(sizeof(struct ArrowSchema));
        if (oi->children[i] == NULL ||
            make_schema(oi->children[i], i == 0 ? label_format : "l", LT_FIELDS[i], 0) != 0) {
            free(oi->children[i]);
            oi->children[i] = NULL;
            release_schema(out);
            return -1;
        }
    }
    return 0;
}

/* The labels' Arrow format: text keeps text or binary, integers widen to Int64 (UInt64 stays). */
static const char *lt_label_format(const struct ArrowSchema *a, const struct ArrowSchema *p,
                                   const col_type *ta, const col_type *tp) {
    const col_type *t = ta->kind != ELEM_NULL ? ta : tp;
    const struct ArrowSchema *s = ta->kind != ELEM_NULL ? a : p;
    if (is_text(t->kind)) {
        const char *f = s->children[0]->format;
        return (strcmp(f, "vz") == 0 || strcmp(f, "z") == 0 || strcmp(f, "Z") == 0) ? "Z" : "U";
    }
    if (t->kind == ELEM_INT && t->width == 8 && !t->is_signed) return "L";
    return "l";
}

static int lt_check(const struct ArrowSchema *a, const struct ArrowSchema *p, col_type *ta,
                    col_type *tp) {
    if (check_inputs(a, p, ta, tp) != 0) return -1;
    if (ta->kind == ELEM_INT && tp->kind == ELEM_INT &&
        (ta->width != tp->width || ta->is_signed != tp->is_signed)) {
        set_error("mlsql plugin: label_table needs the same integer type on both sides");
        return -1;
    }
    return 0;
}

static void lt_field(const struct ArrowSchema *fields, size_t n, struct ArrowSchema *out) {
    col_type ta, tp;
    if (fields == NULL || n != 2) {
        set_error("mlsql plugin: takes two list columns (actual, predicted), got %zu", n);
        return;
    }
    if (lt_check(&fields[0], &fields[1], &ta, &tp) != 0) return;
    if (lt_schema(out, lt_label_format(&fields[0], &fields[1], &ta, &tp), fields[0].name) != 0)
        set_error("mlsql plugin: out of memory");
}

typedef struct {
    mlsql_key *k;
    size_t n, cap;
} key_buf;

/* The row's labels of one side as keys (text, or integers widened by their signedness). */
static int lt_keys(const items *it, const col_type *t, int text, key_buf *out) {
    out->n = 0;
    size_t n = it->n;
    if (n > out->cap) {
        size_t cap = grown(out->cap, n, sizeof(mlsql_key));
        mlsql_key *k = cap ? (mlsql_key *)realloc(out->k, cap * sizeof *k) : NULL;
        if (k == NULL) return -1;
        out->k = k;
        out->cap = cap;
    }
    for (size_t i = 0; i < n; i++) {
        if (text) {
            out->k[i] = mlsql_text_key(it->text[i].ptr, it->text[i].len);
        } else {
            int64_t x = it->ints[i];
            mlsql_key k = {NULL, 0, (uint64_t)x, 0};
            if (t->is_signed && x < 0) k.hi = UINT64_MAX;
            out->k[i] = k;
        }
    }
    out->n = n;
    return 0;
}

/* The table's entries as the one-row output series. */
static int lt_output(const mlsql_label_table *t, const char *label_format, const char *name,
                     int64_t length, SeriesExport *out) {
    size_t m = mlsql_lt_entries(t);
    int text = label_format[0] == 'U' || label_format[0] == 'Z';
    if (m > (size_t)INT64_MAX / 2 || m > SIZE_MAX / sizeof(int64_t) - 1) return -1;
    size_t bits = (m + 7) / 8 + 1, data_len = 0;
    for (size_t i = 0; i < t->label_cap; i++)
        if (t->labels[i].used) data_len += t->labels[i].key.len;
    void *lab[3] = {calloc(bits, 1), malloc((m + 1) * sizeof(int64_t)),
                    text ? malloc(data_len ? data_len : 1) : NULL};
    void *cnt[4][3];
    for (int f = 0; f < 4; f++) {
        cnt[f][0] = calloc(bits, 1);
        cnt[f][1] = malloc(m ? m * sizeof(int64_t) : 1);
        cnt[f][2] = NULL;
    }
    if (length < 0 || (uint64_t)length >= SIZE_MAX / sizeof(int64_t)) return -1;
    int64_t *list_offsets = (int64_t *)malloc(((size_t)length + 1) * sizeof(int64_t));
    owned_series *series = (owned_series *)calloc(1, sizeof *series);
    int ok = lab[0] && lab[1] && (!text || lab[2]) && list_offsets && series;
    for (int f = 0; f < 4; f++) ok = ok && cnt[f][0] && cnt[f][1];
    if (!ok) {
        for (int i = 0; i < 3; i++) free(lab[i]);
        for (int f = 0; f < 4; f++) free(cnt[f][0]), free(cnt[f][1]);
        free(list_offsets);
        free(series);
        return -1;
    }
    uint8_t *lvalid = (uint8_t *)lab[0];
    int64_t *lvals = (int64_t *)lab[1];
    char *ldata = (char *)lab[2];
    int64_t *v[4];
    uint8_t *valid[4];
    for (int f = 0; f < 4; f++) {
        v[f] = (int64_t *)cnt[f][1];
        valid[f] = (uint8_t *)cnt[f][0];
    }
    size_t e = 0, pos = 0;
    int64_t label_nulls = 0, count_nulls = 0;
    if (text) lvals[0] = 0;
    for (size_t i = 0; i < t->label_cap; i++) {
        const mlsql_label_slot *s = &t->labels[i];
        if (!s->used) continue;
        lvalid[e >> 3] |= (uint8_t)(1u << (e & 7));
        if (text) {
            if (s->key.len) memcpy(ldata + pos, s->key.ptr, s->key.len);
            pos += s->key.len;
            lvals[e + 1] = (int64_t)pos;
        } else {
            lvals[e] = (int64_t)s->key.lo;
        }
        int64_t got[4] = {s->tp, s->n_actual, s->n_predicted, 0};
        for (int f = 0; f < 4; f++) {
            v[f][e] = got[f];
            valid[f][e >> 3] |= (uint8_t)(1u << (e & 7));
        }
        e++;
    }
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; pass == 0 && i < t->row_cap; i++) {
            const mlsql_row_slot *r = &t->rows[i];
            if (!r->used) continue;
            int64_t got[4] = {r->tp, r->n_actual, r->n_predicted, r->n};
            for (int f = 0; f < 4; f++) {
                v[f][e] = got[f];
                valid[f][e >> 3] |= (uint8_t)(1u << (e & 7));
            }
            if (text) lvals[e + 1] = (int64_t)pos;
            else lvals[e] = 0;
            label_nulls++;
            e++;
        }
        if (pass == 1 && t->unknown > 0) {
            for (int f = 0; f < 3; f++) v[f][e] = 0;
            v[3][e] = t->unknown;
            valid[3][e >> 3] |= (uint8_t)(1u << (e & 7));
            if (text) lvals[e + 1] = (int64_t)pos;
            else lvals[e] = 0;
            label_nulls++;
            count_nulls++;
            e++;
        }
    }
    list_offsets[0] = 0;
    for (int64_t i = 1; i <= length; i++) list_offsets[i] = (int64_t)m; /* rows after the first: [] */
    if (lt_schema(&series->schema, label_format, name) != 0) goto fail_all;
    {
        void *lm[3] = {NULL, list_offsets, NULL};
        list_offsets = NULL;
        if (lt_make_array(&series->array, length, 0, 2, lm, 1) != 0) goto fail_all;
    }
    lt_array *lo = (lt_array *)series->array.private_data;
    struct ArrowArray *item = (struct ArrowArray *)calloc(1, sizeof *item);
    if (item == NULL) goto fail_all;
    lo->children[0] = item;
    {
        void *sm[3] = {NULL, NULL, NULL};
        if (lt_make_array(item, (int64_t)m, 0, 1, sm, 5) != 0) goto fail_all;
    }
    lt_array *io = (lt_array *)item->private_data;
    for (int f = 0; f < 5; f++) {
        struct ArrowArray *c = (struct ArrowArray *)calloc(1, sizeof *c);
        if (c == NULL) goto fail_all;
        io->children[f] = c;
        int rc;
        if (f == 0) {
            rc = lt_make_array(c, (int64_t)m, label_nulls, text ? 3 : 2, lab, 0);
        } else {
            rc = lt_make_array(c, (int64_t)m, f == 4 ? 0 : count_nulls, 2, cnt[f == 4 ? 3 : f - 1], 0);
        }
        if (f == 0) lab[0] = lab[1] = lab[2] = NULL;
        else cnt[f == 4 ? 3 : f - 1][0] = cnt[f == 4 ? 3 : f - 1][1] = NULL;
        if (rc != 0) goto fail_all;
    }
    series->array_ptrs[0] = &series->array;
    out->field = &series->schema;
    out->arrays = series->array_ptrs;
    out->len = 1;
    out->release = release_series;
    out->private_data = series;
    return 0;
fail_all:
    if (series->array.release != NULL) series->array.release(&series->array);
    if (series->schema.release != NULL) series->schema.release(&series->schema);
    free(series);
    free(list_offsets);
    for (int i = 0; i < 3; i++) free(lab[i]);
    for (int f = 0; f < 4; f++) free(cnt[f][0]), free(cnt[f][1]);
    return -1;
}

static int lt_compute(const SeriesExport *inputs, size_t n, SeriesExport *out, int per_row) {
    col_type ta, tp;
    cursor ca, cp;
    if (inputs == NULL || n != 2) {
        set_error("mlsql plugin: takes two list columns (actual, predicted), got %zu", n);
        return -1;
    }
    if (lt_check(inputs[0].field, inputs[1].field, &ta, &tp) != 0) return -1;
    if (cursor_open(&ca, &inputs[0], &ta, "actual") != 0 ||
        cursor_open(&cp, &inputs[1], &tp, "predicted") != 0)
        return -1;
    if (ca.total != cp.total) {
        set_error("mlsql plugin: actual has %lld rows and predicted %lld", (long long)ca.total,
                  (long long)cp.total);
        return -1;
    }
    int text = is_text(ta.kind) || is_text(tp.kind);
    const col_type *tk = ta.kind != ELEM_NULL ? &ta : &tp;
    mlsql_label_table t;
    mlsql_lt_init(&t, text);
    items ia = {0}, ip = {0}, big = {0};
    key_buf ka = {0}, kp = {0};
    mlsql_scratch scratch = {0};
    int rc = -1;
    for (int64_t r = 0; r < ca.total; r++) {
        if (cursor_next(&ca, r) != 0 || cursor_next(&cp, r) != 0) goto done;
        if (row_is_null(&ca) || row_is_null(&cp)) {
            mlsql_lt_add_unknown(&t, 1);
            continue;
        }
        ia.n = ip.n = 0;
        if (gather(&ca.view, &ta, ca.row, &ia, &big, 0, "actual") != 0 ||
            gather(&cp.view, &tp, cp.row, &ip, &big, 0, "predicted") != 0)
            goto done;
        if (lt_keys(&ia, tk, text, &ka) != 0 || lt_keys(&ip, tk, text, &kp) != 0 ||
            mlsql_lt_add_row(&t, ka.k, ka.n, kp.k, kp.n, &scratch) != 0) {
            set_error("mlsql plugin: out of memory");
            goto done;
        }
    }
    if (lt_output(&t, lt_label_format(inputs[0].field, inputs[1].field, &ta, &tp),
                  inputs[0].field->name, per_row ? ca.total : 1, out) != 0) {
        set_error("mlsql plugin: out of memory");
        goto done;
    }
    rc = 0;
done:
    mlsql_lt_free(&t);
    items_free(&ia);
    items_free(&ip);
    items_free(&big);
    free(ka.k);
    free(kp.k);
    mlsql_scratch_free(&scratch);
    return rc;
}

/* label_table: one row (an aggregation); label_table_rows: as many rows as the input, the
 * first holding the table of all of them and the others empty (elementwise, so that the
 * streaming engine runs it batch by batch; the caller adds the batches' tables up). */
MLSQL_PLUGIN_FUNCTION(label_table, lt_field(fields, n, out), lt_compute(inputs, n, out, 0))
MLSQL_PLUGIN_FUNCTION(label_table_rows, lt_field(fields, n, out), lt_compute(inputs, n, out, 1))

/* ------------------------------------------------------------------ label scores
 * label_scores_pool, label_scores_labels, label_scores_rows (modes MLSQL_LS_POOL, _LABELS and
 * _ROWS of label_scores.h): (actual List<T>, entries List<Struct{label T, score Float64}>
 * [, weight Float64]) -> per call (an aggregation: one group's rows) one row of
 * Struct{nu, n, npos: Int64, wsum: Float64, segs: LargeList<Struct{n_explicit, n_positive,
 * n_positive_unscored, precision_sum, u, w: Float64, rows: Int64}>}: the known rows (no input
 * NULL) n, those weighing more than 0 npos, their weight wsum, and the group's segment
 * statistics as the DuckDB extension's mlsql_native_label_scores gives them: nu the distinct
 * labels of the cells; per
 * segment (pool: one; labels: one per label; rows: one per (positives, unscored positives) of
 * a row, its statistics the weighted means over those rows, w their weight and rows their
 * number) the statistics of mlsql.measures.label_scores.Segment. A known row's cells count when
 * its weight is above 0 (the caller refuses negative, NaN and infinite weights: such a row adds
 * its weight to wsum and no cell). Entries: a label's first entry in the row is its score (a NULL entry,
 * label or score is no score); labels of the two sides may be integers of different widths
 * (compared as values) but not text and integers. */
typedef struct {
    col_type list;                    /* the list (its kind unused) */
    col_type label;                   /* the struct's first field */
    int score_null;                   /* the score field is of type Null: no scores */
    const struct ArrowArray *opened;  /* the struct array `labels` and the scores were read from */
    chunk_view labels;                /* the label field's elements */
    const uint8_t *struct_validity;   /* the entries' own validity (a NULL entry), or NULL */
    int64_t struct_offset;            /* the struct array's offset, added to its fields' */
    const uint8_t *score_validity;
    const double *scores;
    int64_t score_offset;
} ls_entries;

static int ls_parse_entries(const struct ArrowSchema *s, ls_entries *e) {
    memset(e, 0, sizeof *e);
    if (s == NULL || s->format == NULL) goto bad;
    if (strcmp(s->format, "n") == 0) {
        e->list.top_null = 1;
        return 0;
    }
    if (strcmp(s->format, "+l") != 0 && strcmp(s->format, "+L") != 0) goto bad;
    e->list.large = s->format[1] == 'L';
    e->list.kind = ELEM_NULL; /* open_chunk reads the list's offsets and child, no elements */
    if (s->n_children != 1 || s->children == NULL || s->children[0] == NULL) goto bad;
    const struct ArrowSchema *st = s->children[0];
    if (st->format == NULL || strcmp(st->format, "+s") != 0 || st->n_children != 2 ||
        st->children == NULL || st->children[0] == NULL || st->children[1] == NULL ||
        st->children[1]->format == NULL)
        goto bad;
    /* the label field as if it were a list's elements: parse_type reads a list's child */
    struct ArrowSchema as_list = *st;
    as_list.format = "+l";
    as_list.n_children = 1;
    as_list.children = st->children; /* [0]: the label field */
    if (parse_type(&as_list, &e->label, "scores' labels") != 0) return -1;
    const char *f = st->children[1]->format;
    if (strcmp(f, "n") == 0)
        e->score_null = 1;
    else if (strcmp(f, "g") != 0)
        goto bad;
    return 0;
bad:
    set_error("mlsql plugin: scores must be a list of {label, score: Float64} structs");
    return -1;
}

/* Open the struct array of the current chunk of the entries' cursor (once a chunk). */
static int ls_open_struct(ls_entries *e, const struct ArrowArray *st) {
    const char *side = "scores";
    if (e->opened == st) return 0;
    e->opened = st;
    if (check_array(st, side) != 0) return -1;
    if (st->n_children != 2 || st->children == NULL || st->n_buffers < 1 || st->buffers == NULL)
        goto malformed;
    const struct ArrowArray *label = st->children[0], *score = st->children[1];
    if (check_array(label, side) != 0 || check_array(score, side) != 0) return -1;
    /* a field's element i of the struct is the field's element st->offset + i */
    if (label->length - st->offset < st->length || score->length - st->offset < st->length)
        goto malformed;
    e->struct_validity = (const uint8_t *)st->buffers[0];
    e->struct_offset = st->offset;
    if (open_elements(label, &e->label, &e->labels, side) != 0) return -1;
    e->score_validity = NULL;
    e->scores = NULL;
    e->score_offset = score->offset;
    if (!e->score_null) {
        if (score->n_buffers != 2 || score->buffers == NULL) goto malformed;
        e->score_validity = (const uint8_t *)score->buffers[0];
        e->scores = (const double *)score->buffers[1];
        if (score->length > 0 && e->scores == NULL) goto malformed;
    }
    return 0;
malformed:
    set_error("mlsql plugin: scores has a malformed struct array");
    return -1;
}

/* The labels and scores of the entries of row `row` (a list row of the cursor's chunk v): NULL
 * entries and NULL labels dropped, a NULL score kept as not valid. */
static int ls_gather_entries(ls_entries *e, const chunk_view *v, int64_t row, items *labels,
                             double **scores, unsigned char **valid, size_t *cap) {
    int64_t start, end;
    labels->n = 0;
    if (row_span(v, &e->list, row, &start, &end, "scores") != 0) return -1;
    if (ls_open_struct(e, v->child) != 0) return -1;
    if (end == start || e->label.kind == ELEM_NULL) return 0;
    size_t n = (size_t)(end - start);
    int text = is_text(e->label.kind);
    if (reserve(labels, n, text) != 0) goto oom;
    if (n > *cap) {
        double *s = (double *)realloc(*scores, n * sizeof **scores);
        if (s != NULL) *scores = s;
        unsigned char *ok = (unsigned char *)realloc(*valid, n);
        if (ok != NULL) *valid = ok;
        if (s == NULL || ok == NULL) goto oom;
        *cap = n;
    }
    for (int64_t j = start; j < end; j++) {
        int64_t i = e->struct_offset + j; /* the struct's element j, in its fields' indexing */
        if (e->struct_validity != NULL && !bit(e->struct_validity, i)) continue;
        int64_t k = e->labels.child->offset + i;
        if (e->labels.child_validity != NULL && !bit(e->labels.child_validity, k)) continue;
        int too_big;
        size_t at = labels->n;
        if (read_element(&e->labels, &e->label, k, labels, &too_big, "scores") != 0) return -1;
        int64_t ks = e->score_offset + i;
        int ok = !e->score_null && (e->score_validity == NULL || bit(e->score_validity, ks));
        (*valid)[at] = (unsigned char)ok;
        (*scores)[at] = ok ? e->scores[ks] : 0.0;
    }
    return 0;
oom:
    set_error("mlsql plugin: out of memory");
    return -1;
}

/* A Float64 column walked row by row (the weight): its chunk, row, and a broadcast flag. */
typedef struct {
    const SeriesExport *s;
    int null_type;
    size_t chunk;
    int64_t row, total;
    int broadcast;
} ls_weights;

static int ls_weights_open(ls_weights *w, const SeriesExport *s) {
    memset(w, 0, sizeof *w);
    w->s = s;
    if (s->field == NULL || s->field->format == NULL ||
        (strcmp(s->field->format, "g") != 0 && strcmp(s->field->format, "n") != 0)) {
        set_error("mlsql plugin: the weight must be a Float64 column");
        return -1;
    }
    w->null_type = strcmp(s->field->format, "n") == 0;
    if (s->len > 0 && s->arrays == NULL) {
        set_error("mlsql plugin: the weight has no chunks");
        return -1;
    }
    for (size_t i = 0; i < s->len; i++) {
        const struct ArrowArray *a = s->arrays[i];
        if (check_array(a, "the weight") != 0) return -1;
        if (!w->null_type &&
            (a->n_buffers != 2 || a->buffers == NULL || (a->length > 0 && a->buffers[1] == NULL))) {
            set_error("mlsql plugin: the weight has a malformed array");
            return -1;
        }
        w->total += a->length;
    }
    return 0;
}

/* The weight of the next row (r: the row's number; 0 for a first call); *present: not NULL. */
static int ls_weight_next(ls_weights *w, int64_t r, double *out, int *present) {
    if (r > 0 && !w->broadcast) w->row++;
    while (w->chunk < w->s->len && w->row >= w->s->arrays[w->chunk]->length) {
        w->chunk++;
        w->row = 0;
    }
    if (w->chunk >= w->s->len) {
        set_error("mlsql plugin: the weight has fewer rows than expected");
        return -1;
    }
    *out = 0.0;
    *present = 0;
    if (w->null_type) return 0; /* a Null array has no buffers */
    const struct ArrowArray *a = w->s->arrays[w->chunk];
    int64_t k = a->offset + w->row;
    const uint8_t *valid = (const uint8_t *)a->buffers[0];
    *present = valid == NULL || bit(valid, k);
    if (*present) *out = ((const double *)a->buffers[1])[k];
    return 0;
}

static const char *const LS_FIELDS[7] = {"n_explicit", "n_positive", "n_positive_unscored",
                                         "precision_sum", "u", "w", "rows"};

/* A child schema of `parent` (made with make_schema and room for it): slot i. */
static int ls_child_schema(struct ArrowSchema *parent, int i, const char *format, const char *name,
                           int n_children) {
    owned_schema *o = (owned_schema *)parent->private_data;
    o->children[i] = (struct ArrowSchema *)malloc(sizeof(struct ArrowSchema));
    if (o->children[i] == NULL || make_schema(o->children[i], format, name, n_children) != 0) {
        free(o->children[i]);
        o->children[i] = NULL;
        return -1;
    }
    return 0;
}

/* The group's counts beside its segments (the output's first fields). */
typedef struct {
    int64_t n, npos;
    double wsum;
} ls_counts;

static const char *const LS_COUNTS[4] = {"nu", "n", "npos", "wsum"};

/* The output type: Struct{nu, n, npos: Int64, wsum: Float64, segs: LargeList<Struct{LS_FIELDS:
 * Float64..., rows: Int64}>}. */
static int ls_schema(struct ArrowSchema *out, const char *name) {
    if (make_schema(out, "+s", name, 5) != 0) return -1;
    owned_schema *o = (owned_schema *)out->private_data;
    for (int i = 0; i < 4; i++)
        if (ls_child_schema(out, i, i == 3 ? "g" : "l", LS_COUNTS[i], 0) != 0) goto fail;
    if (ls_child_schema(out, 4, "+L", "segs", 1) != 0 ||
        ls_child_schema(o->children[4], 0, "+s", "item", 7) != 0)
        goto fail;
    struct ArrowSchema *item = ((owned_schema *)o->children[4]->private_data)->children[0];
    for (int i = 0; i < 7; i++)
        if (ls_child_schema(item, i, i == 6 ? "l" : "g", LS_FIELDS[i], 0) != 0) goto fail;
    return 0;
fail:
    release_schema(out);
    return -1;
}

/* A child array of `parent` (made with lt_make_array): slot i, owning the buffers `mem`. */
static int ls_child_array(struct ArrowArray *parent, int i, int64_t length, int n_buffers,
                          void *mem[3], int n_children) {
    struct ArrowArray *c = (struct ArrowArray *)calloc(1, sizeof *c);
    if (c == NULL) {
        for (int b = 0; b < n_buffers; b++) free(mem[b]);
        return -1;
    }
    ((lt_array *)parent->private_data)->children[i] = c;
    return lt_make_array(c, length, 0, n_buffers, mem, n_children);
}

/* The table's segments as the one-row output series (sorts the table's cells). */
static int ls_output(mlsql_ls_table *t, const ls_counts *counts, const char *name,
                     SeriesExport *out) {
    int has_rows = counts->npos > 0;
    size_t m = 0;
    if (has_rows) {
        if (t->mode != MLSQL_LS_ROWS) mlsql_ls_sort(t);
        m = mlsql_ls_segments(t);
    }
    if (m > (size_t)INT64_MAX / 2 || m >= SIZE_MAX / sizeof(double)) return -1;
    double *f[6] = {NULL};
    int64_t *rows = (int64_t *)malloc(m ? m * sizeof(int64_t) : 1);
    int ok = rows != NULL;
    for (int c = 0; c < 6; c++) {
        f[c] = (double *)malloc(m ? m * sizeof(double) : 1);
        ok = ok && f[c] != NULL;
    }
    int64_t *nu = (int64_t *)malloc(4 * sizeof(int64_t)); /* nu, n, npos, wsum: one value each */
    int64_t *offsets = (int64_t *)malloc(2 * sizeof(int64_t));
    owned_series *series = (owned_series *)calloc(1, sizeof *series);
    if (!ok || nu == NULL || offsets == NULL || series == NULL) {
        for (int c = 0; c < 6; c++) free(f[c]);
        free(rows);
        free(nu);
        free(offsets);
        free(series);
        return -1;
    }
    if (m > 0) mlsql_ls_emit(t, m, f, rows);
    nu[0] = has_rows ? (int64_t)t->n_labels : 0;
    nu[1] = counts->n;
    nu[2] = counts->npos;
    memcpy(&nu[3], &counts->wsum, sizeof(double));
    offsets[0] = 0;
    offsets[1] = (int64_t)m;
    int rc = ls_schema(&series->schema, name);
    void *none[3] = {NULL, NULL, NULL};
    if (rc == 0) rc = lt_make_array(&series->array, 1, 0, 1, none, 5);
    for (int c = 0; c < 4 && rc == 0; c++) { /* one 8-byte value each, copied from nu[c] */
        void *one = malloc(sizeof(int64_t));
        if (one != NULL) memcpy(one, &nu[c], sizeof(int64_t));
        void *mem[3] = {NULL, one, NULL};
        rc = one != NULL ? ls_child_array(&series->array, c, 1, 2, mem, 0) : -1;
    }
    struct ArrowArray *segs = NULL;
    if (rc == 0) {
        void *mem[3] = {NULL, offsets, NULL};
        offsets = NULL;
        rc = ls_child_array(&series->array, 4, 1, 2, mem, 1);
        segs = ((lt_array *)series->array.private_data)->children[4];
    }
    struct ArrowArray *item = NULL;
    if (rc == 0) {
        rc = ls_child_array(segs, 0, (int64_t)m, 1, none, 7);
        item = ((lt_array *)segs->private_data)->children[0];
    }
    for (int c = 0; c < 7; c++) {
        void *mem[3] = {NULL, c == 6 ? (void *)rows : (void *)f[c], NULL};
        if (c == 6)
            rows = NULL;
        else
            f[c] = NULL;
        if (rc == 0)
            rc = ls_child_array(item, c, (int64_t)m, 2, mem, 0);
        else
            free(mem[1]);
    }
    free(nu);
    free(offsets);
    if (rc != 0) {
        if (series->array.release != NULL) series->array.release(&series->array);
        if (series->schema.release != NULL) series->schema.release(&series->schema);
        free(series);
        return -1;
    }
    series->array_ptrs[0] = &series->array;
    out->field = &series->schema;
    out->arrays = series->array_ptrs;
    out->len = 1;
    out->release = release_series;
    out->private_data = series;
    return 0;
}

static int ls_check(const struct ArrowSchema *fields, size_t n, col_type *ta, ls_entries *e) {
    if (fields == NULL || (n != 2 && n != 3)) {
        set_error("mlsql plugin: takes (actual, scores[, weight]), got %zu columns", n);
        return -1;
    }
    if (parse_type(&fields[0], ta, "actual") != 0 || ls_parse_entries(&fields[1], e) != 0)
        return -1;
    if ((is_text(ta->kind) && e->label.kind == ELEM_INT) ||
        (ta->kind == ELEM_INT && is_text(e->label.kind))) {
        set_error("mlsql plugin: actual and the scores' labels hold different kinds of labels "
                  "(both text or both integers)");
        return -1;
    }
    if (n == 3 && (fields[2].format == NULL ||
                   (strcmp(fields[2].format, "g") != 0 && strcmp(fields[2].format, "n") != 0))) {
        set_error("mlsql plugin: the weight must be a Float64 column");
        return -1;
    }
    return 0;
}

static void ls_field(const struct ArrowSchema *fields, size_t n, struct ArrowSchema *out) {
    col_type ta;
    ls_entries e;
    if (ls_check(fields, n, &ta, &e) != 0) return;
    if (ls_schema(out, fields[0].name) != 0) set_error("mlsql plugin: out of memory");
}

static int ls_compute(const SeriesExport *inputs, size_t n, SeriesExport *out, int mode) {
    col_type ta;
    ls_entries e;
    cursor ca, ce;
    ls_weights cw = {0};
    if (inputs == NULL || n < 2) {
        set_error("mlsql plugin: takes (actual, scores[, weight]), got %zu columns", n);
        return -1;
    }
    const struct ArrowSchema *fields[3] = {inputs[0].field, inputs[1].field,
                                           n > 2 ? inputs[2].field : NULL};
    struct ArrowSchema copies[3];
    for (size_t i = 0; i < n && i < 3; i++) {
        if (fields[i] == NULL) {
            set_error("mlsql plugin: an input has no Arrow type");
            return -1;
        }
        copies[i] = *fields[i];
    }
    if (ls_check(copies, n, &ta, &e) != 0) return -1;
    if (cursor_open(&ca, &inputs[0], &ta, "actual") != 0 ||
        cursor_open(&ce, &inputs[1], &e.list, "scores") != 0 ||
        (n == 3 && ls_weights_open(&cw, &inputs[2]) != 0))
        return -1;
    /* the longest input sets the rows; an input of one row is broadcast (a literal) */
    int64_t length = ca.total > ce.total ? ca.total : ce.total;
    if (n == 3 && cw.total > length) length = cw.total;
    int64_t totals[3] = {ca.total, ce.total, n == 3 ? cw.total : length};
    int *broadcast[3] = {&ca.broadcast, &ce.broadcast, &cw.broadcast};
    for (int i = 0; i < 3; i++) {
        if (totals[i] == length) continue;
        if (totals[i] != 1) {
            set_error("mlsql plugin: actual has %lld rows, scores %lld and the weight %lld",
                      (long long)ca.total, (long long)ce.total, (long long)totals[2]);
            return -1;
        }
        *broadcast[i] = 1;
    }
    int text = is_text(ta.kind) || is_text(e.label.kind);
    mlsql_ls_table t;
    mlsql_ls_init(&t, text);
    mlsql_ls_scratch scratch = {0};
    items ia = {0}, ik = {0}, big = {0};
    key_buf ka = {0}, kk = {0};
    double *scores = NULL;
    unsigned char *valid = NULL;
    size_t cap = 0;
    ls_counts counts = {0, 0, 0.0};
    int rc = -1;
    for (int64_t r = 0; r < length; r++) {
        double w = 1.0;
        int present = 1;
        if (cursor_next(&ca, r) != 0 || cursor_next(&ce, r) != 0 ||
            (n == 3 && ls_weight_next(&cw, r, &w, &present) != 0))
            goto done;
        if (row_is_null(&ca) || row_is_null(&ce) || !present) continue;
        counts.n++;
        counts.wsum += w;
        if (!(w > 0)) continue;
        counts.npos++;
        ia.n = 0;
        if (gather(&ca.view, &ta, ca.row, &ia, &big, 0, "actual") != 0 ||
            ls_gather_entries(&e, &ce.view, ce.row, &ik, &scores, &valid, &cap) != 0)
            goto done;
        if (lt_keys(&ia, &ta, text, &ka) != 0 || lt_keys(&ik, &e.label, text, &kk) != 0 ||
            mlsql_ls_add_row(&t, mode, ka.k, ka.n, kk.k, scores, valid, kk.n, w, &scratch) != 0) {
            set_error("mlsql plugin: out of memory");
            goto done;
        }
    }
    if (ls_output(&t, &counts, inputs[0].field->name, out) != 0) {
        set_error("mlsql plugin: out of memory");
        goto done;
    }
    rc = 0;
done:
    mlsql_ls_free(&t);
    mlsql_ls_scratch_free(&scratch);
    items_free(&ia);
    items_free(&ik);
    items_free(&big);
    free(ka.k);
    free(kk.k);
    free(scores);
    free(valid);
    return rc;
}

#define MLSQL_LABEL_SCORES_FUNCTION(name, mode) \
    MLSQL_PLUGIN_FUNCTION(name, ls_field(fields, n, out), ls_compute(inputs, n, out, mode))
MLSQL_LABEL_SCORES_FUNCTION(label_scores_pool, MLSQL_LS_POOL)
MLSQL_LABEL_SCORES_FUNCTION(label_scores_labels, MLSQL_LS_LABELS)
MLSQL_LABEL_SCORES_FUNCTION(label_scores_rows, MLSQL_LS_ROWS)

/* ------------------------------------------------------------------ the row functions */
#define MLSQL_ROW_FUNCTION(name, what) \
    MLSQL_PLUGIN_FUNCTION(name, field_function(fields, n, out, what), compute(inputs, n, out, what))
MLSQL_ROW_FUNCTION(set_counts, OUT_COUNTS)
MLSQL_ROW_FUNCTION(set_tp, OUT_TP)
MLSQL_ROW_FUNCTION(set_n_actual, OUT_N_ACTUAL)
MLSQL_ROW_FUNCTION(set_n_predicted, OUT_N_PREDICTED)
MLSQL_ROW_FUNCTION(set_counts_packed, OUT_PACKED)
