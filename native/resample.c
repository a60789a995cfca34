/*
 * mlsql's resample kernels (plain C11, no dependency beyond the C library), loaded with
 * ctypes by mlsql/_resample/native.py. Each gives exactly the numbers of the portable numpy
 * code it replaces (same additions in the same order, same table and search).
 *
 * mlsql_label_sums: per-label weighted sums of a sparse 0/1 (tuples x labels) matrix under a
 * batch of resample weights: a block of resamples per pass over the cells, the block's weights
 * copied tuple-major a tile of tuples at a time and its sums kept label-major (a cell reads
 * and adds one contiguous line). The cells come in tuple order, a label's cells in ascending
 * tuples; each label sums its cells in that order from 0, as numpy.add.at does in the
 * portable code.
 *
 * mlsql_label_sums_whole: the same sums where the weights are whole numbers (Poisson draws of
 * an unweighted call) and each (tuple, label) cell comes once, in 32-bit integers: exact, so the
 * same numbers, with half the memory traffic.
 *
 * mlsql_label_sums_drawn: mlsql_label_sums_whole of Poisson(m) draws it makes itself, tile by
 * tile (no resamples x tuples matrix): each resample's Poisson(1) draws from its own PCG64 state
 * (the stream's state at its first draw), the other tuples' draws handed over.
 *
 * mlsql_poisson_one: Poisson(1) by the inverse CDF of uniforms from a generator's raw 64 bits:
 * a table of the 4096 top-12-bit cells (a value, or -1 where a cell straddles a step of the
 * CDF, then searched as searchsorted(cdf, u, 'right') with u = (raw >> 11) / 2^53).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(_WIN32)
#define MLSQL_EXPORT __declspec(dllexport)
#else
#define MLSQL_EXPORT __attribute__((visibility("default")))
#endif

MLSQL_EXPORT int64_t mlsql_resample_version(void) { return 6; }

/* resamples summed in one pass over the cells (the cells are read once per block) */
#define MLSQL_BLOCK 8
/* resamples summed in one pass by mlsql_label_sums_drawn (its tile holds 32-bit weights) */
#define MLSQL_DRAWN_BLOCK 16
/* tuples whose block of weights is copied tuple-major at once (a tile of 128 KB) */
#define MLSQL_TILE 2048

/* Returns 0, or -1 where its scratch (labels x block doubles) cannot be had. */
MLSQL_EXPORT int64_t mlsql_label_sums(const double *w, int64_t n_resamples, int64_t n_tuples,
                                      const int64_t *cell_tuple, const int64_t *cell_label,
                                      int64_t n_cells, double *out, int64_t n_labels) {
    /* a block's sums label-major (a label's block of resamples in one cache line), then
       written out resample-major: each (resample, label) still adds its cells in order from 0 */
    double *acc = malloc((size_t)(n_labels > 0 ? n_labels : 1) * MLSQL_BLOCK * sizeof(double));
    double *tile = malloc((size_t)MLSQL_TILE * MLSQL_BLOCK * sizeof(double));
    if (!acc || !tile) {
        free(acc);
        free(tile);
        return -1;
    }
    int64_t r = 0;
    for (; r + MLSQL_BLOCK <= n_resamples; r += MLSQL_BLOCK) {
        const double *row = w + r * n_tuples;
        memset(acc, 0, (size_t)n_labels * MLSQL_BLOCK * sizeof(double));
        int64_t c = 0;
        for (int64_t t0 = 0; t0 < n_tuples && c < n_cells; t0 += MLSQL_TILE) {
            int64_t t1 = t0 + MLSQL_TILE < n_tuples ? t0 + MLSQL_TILE : n_tuples;
            if (cell_tuple[c] >= t1) continue;
            /* the block's weights of tuples t0..t1, tuple-major: a cell reads one cache line */
            for (int b = 0; b < MLSQL_BLOCK; b++) {
                const double *x = row + b * n_tuples;
                for (int64_t t = t0; t < t1; t++) tile[(t - t0) * MLSQL_BLOCK + b] = x[t];
            }
            for (; c < n_cells && cell_tuple[c] < t1; c++) {
                const double *x = tile + (cell_tuple[c] - t0) * MLSQL_BLOCK;
                double *y = acc + cell_label[c] * MLSQL_BLOCK;
                for (int b = 0; b < MLSQL_BLOCK; b++) y[b] += x[b];
            }
        }
        for (int b = 0; b < MLSQL_BLOCK; b++) {
            double *o = out + (r + b) * n_labels;
            for (int64_t l = 0; l < n_labels; l++) o[l] = acc[l * MLSQL_BLOCK + b];
        }
    }
    free(acc);
    free(tile);
    for (int64_t i = r * n_labels; i < n_resamples * n_labels; i++) out[i] = 0.0;
    for (; r < n_resamples; r++) {
        const double *row = w + r * n_tuples;
        double *o = out + r * n_labels;
        for (int64_t c = 0; c < n_cells; c++) o[cell_label[c]] += row[cell_tuple[c]];
    }
    return 0;
}

/* mlsql_label_sums where every weight is a whole number and a (tuple, label) cell comes at
   most once: the same blocks and tiles, the weights and sums as 32-bit unsigned integers (half
   the bytes of doubles: a cell's add reads and writes half a cache line). Each sum is then of
   whole numbers below 2^32, so exact, and the same double as mlsql_label_sums adds. Returns 0;
   -2 where a weight is not a whole number in [0, 2^31) or a resample's weights of the tuples
   read add up to 2^32 or more (a sum could wrap: the caller sums in doubles instead; out is
   then undefined); -1 where its scratch cannot be had. */
MLSQL_EXPORT int64_t mlsql_label_sums_whole(const double *w, int64_t n_resamples, int64_t n_tuples,
                                            const int64_t *cell_tuple, const int64_t *cell_label,
                                            int64_t n_cells, double *out, int64_t n_labels) {
    uint32_t *acc =
        malloc((size_t)(n_labels > 0 ? n_labels : 1) * MLSQL_BLOCK * sizeof(uint32_t));
    uint32_t *tile = malloc((size_t)MLSQL_TILE * MLSQL_BLOCK * sizeof(uint32_t));
    if (!acc || !tile) {
        free(acc);
        free(tile);
        return -1;
    }
    int64_t status = 0;
    for (int64_t r = 0; r < n_resamples && status == 0; r += MLSQL_BLOCK) {
        const int nb = n_resamples - r < MLSQL_BLOCK ? (int)(n_resamples - r) : MLSQL_BLOCK;
        const double *row = w + r * n_tuples;
        uint64_t total[MLSQL_BLOCK] = {0};
        int bad = 0;
        memset(acc, 0, (size_t)n_labels * MLSQL_BLOCK * sizeof(uint32_t));
        if (nb < MLSQL_BLOCK) memset(tile, 0, (size_t)MLSQL_TILE * MLSQL_BLOCK * sizeof(uint32_t));
        int64_t c = 0;
        for (int64_t t0 = 0; t0 < n_tuples && c < n_cells; t0 += MLSQL_TILE) {
            int64_t t1 = t0 + MLSQL_TILE < n_tuples ? t0 + MLSQL_TILE : n_tuples;
            if (cell_tuple[c] >= t1) continue;
            for (int b = 0; b < nb; b++) {
                const double *x = row + b * n_tuples;
                uint64_t sum = 0;
                for (int64_t t = t0; t < t1; t++) {
                    double v = x[t];
                    int ok = v >= 0.0 && v < 2147483648.0; /* false for NaN */
                    uint32_t k = ok ? (uint32_t)v : 0u;
                    bad |= !ok | ((double)k != v);
                    sum += k;
                    tile[(t - t0) * MLSQL_BLOCK + b] = k;
                }
                total[b] += sum;
            }
            for (int b = 0; b < nb; b++) bad |= total[b] > UINT32_MAX;
            if (bad) break;
            for (; c < n_cells && cell_tuple[c] < t1; c++) {
                const uint32_t *x = tile + (cell_tuple[c] - t0) * MLSQL_BLOCK;
                uint32_t *y = acc + cell_label[c] * MLSQL_BLOCK;
                for (int b = 0; b < MLSQL_BLOCK; b++) y[b] += x[b];
            }
        }
        if (bad) {
            status = -2;
            break;
        }
        for (int b = 0; b < nb; b++) {
            double *o = out + (r + b) * n_labels;
            for (int64_t l = 0; l < n_labels; l++) o[l] = (double)acc[l * MLSQL_BLOCK + b];
        }
    }
    free(acc);
    free(tile);
    return status;
}

/* Poisson(1) of 64 raw bits: the table's value of the top 12 bits, else searched */
static inline double mlsql_poisson_of(uint64_t x, const double *table, const double *cdf,
                                      int64_t n_cdf) {
    double k = table[x >> 52];
    if (k >= 0) return k;
    double u = (double)(x >> 11) / 9007199254740992.0; /* 2^53 */
    int64_t lo = 0, hi = n_cdf; /* the number of cdf values <= u */
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (cdf[mid] <= u) lo = mid + 1;
        else hi = mid;
    }
    return (double)lo;
}

MLSQL_EXPORT void mlsql_poisson_one(const uint64_t *raw, int64_t n_rows, int64_t n_cols,
                                    const double *table, const double *cdf, int64_t n_cdf,
                                    double *out, int64_t out_stride, const int64_t *out_cols) {
    for (int64_t r = 0; r < n_rows; r++) {
        const uint64_t *bits = raw + r * n_cols;
        double *o = out + r * out_stride;
        for (int64_t j = 0; j < n_cols; j++)
            o[out_cols ? out_cols[j] : j] = mlsql_poisson_of(bits[j], table, cdf, n_cdf);
    }
}

/* numpy's PCG64: state = state * MULT + inc, then out = rotr64(hi ^ lo, hi >> 58) */
#define MLSQL_PCG_MULT_HI 2549297995355413924ULL
#define MLSQL_PCG_MULT_LO 4865540595714422341ULL

#if defined(__SIZEOF_INT128__)
typedef unsigned __int128 mlsql_u128;
static inline uint64_t mlsql_pcg_next(mlsql_u128 *state, mlsql_u128 inc) {
    const mlsql_u128 mult = ((mlsql_u128)MLSQL_PCG_MULT_HI << 64) | MLSQL_PCG_MULT_LO;
    *state = *state * mult + inc;
    uint64_t hi = (uint64_t)(*state >> 64), lo = (uint64_t)*state;
    unsigned rot = (unsigned)(hi >> 58);
    uint64_t x = hi ^ lo;
    return (x >> rot) | (x << ((64u - rot) & 63u));
}
#define MLSQL_HAS_PCG 1
#else
#define MLSQL_HAS_PCG 0
#endif

MLSQL_EXPORT int64_t mlsql_resample_has_pcg64(void) { return MLSQL_HAS_PCG; }

/* lane b's next Poisson(1) draw into the tile's line y */
#define MLSQL_DRAW_LANE(b)                                                                     \
    do {                                                                                       \
        uint64_t x_ = mlsql_pcg_next(&s[b], c_inc);                                            \
        int32_t k_ = cells_of[x_ >> 52];                                                       \
        y[b] = k_ >= 0 ? (uint32_t)k_ : (uint32_t)mlsql_poisson_of(x_, table, cdf, n_cdf);    \
    } while (0)

/* mlsql_label_sums_whole of the weights (resamples x tuples) it draws: resample r's draw of
   tuple t is Poisson(1) of the next raw bits of the PCG64 state states[r] (high word, low word)
   where other_col[t] < 0 (tuple after tuple, as mlsql_poisson_one_pcg64 writes one row), else
   others[r * n_others + other_col[t]]. The draws of the tuples read come as those of a matrix
   made row by row, so the sums are those of mlsql_label_sums_whole over it. A Poisson(1) draw
   is at most n_cdf, so the totals are bounded before drawing. Returns 0; -2 (nothing summed)
   where a handed-over weight is not a whole number in [0, 2^31) or a resample's weights could
   add up to 2^32 (the caller sums the matrix in doubles); -1 where its scratch cannot be had
   or the compiler has no 128-bit integers. */
MLSQL_EXPORT int64_t mlsql_label_sums_drawn(const uint64_t *states, const uint64_t *inc,
                                            int64_t n_resamples, int64_t n_tuples,
                                            const int64_t *other_col, const double *others,
                                            int64_t n_others, const double *table,
                                            const double *cdf, int64_t n_cdf,
                                            const int64_t *cell_tuple, const int64_t *cell_label,
                                            int64_t n_cells, double *out, int64_t n_labels) {
#if MLSQL_HAS_PCG
    enum { B = MLSQL_DRAWN_BLOCK };
    uint64_t n_drawn = 0; /* the tuples drawn here */
    for (int64_t t = 0; t < n_tuples; t++) n_drawn += other_col[t] < 0;
    for (int64_t r = 0; r < n_resamples; r++) {
        uint64_t total = n_drawn * (uint64_t)n_cdf;
        for (int64_t j = 0; j < n_others; j++) {
            double v = others[r * n_others + j];
            if (!(v >= 0.0 && v < 2147483648.0) || (double)(uint32_t)v != v) return -2;
            total += (uint32_t)v;
        }
        if (total > UINT32_MAX) return -2;
    }
    uint32_t *acc = malloc((size_t)(n_labels > 0 ? n_labels : 1) * B * sizeof(uint32_t));
    uint32_t *tile = malloc((size_t)MLSQL_TILE * B * sizeof(uint32_t));
    if (!acc || !tile) {
        free(acc);
        free(tile);
        return -1;
    }
    /* the table's values as integers (-1: searched) */
    int32_t cells_of[4096];
    for (int i = 0; i < 4096; i++) cells_of[i] = (int32_t)table[i];
    const mlsql_u128 c_inc = ((mlsql_u128)inc[0] << 64) | inc[1];
    for (int64_t r = 0; r < n_resamples; r += B) {
        const int nb = n_resamples - r < B ? (int)(n_resamples - r) : B;
        /* a short block's other lanes stay 0 (never drawn, never written out) */
        mlsql_u128 s[B];
        for (int b = 0; b < B; b++)
            s[b] = b < nb ? ((mlsql_u128)states[2 * (r + b)] << 64) | states[2 * (r + b) + 1] : 0;
        memset(acc, 0, (size_t)n_labels * B * sizeof(uint32_t));
        if (nb < B) memset(tile, 0, (size_t)MLSQL_TILE * B * sizeof(uint32_t));
        int64_t c = 0;
        /* every tile up to the last cell's is drawn (a resample's stream runs through each
           tuple), even one without cells */
        for (int64_t t0 = 0; t0 < n_tuples && c < n_cells; t0 += MLSQL_TILE) {
            int64_t t1 = t0 + MLSQL_TILE < n_tuples ? t0 + MLSQL_TILE : n_tuples;
            /* tuple by tuple, the block's resamples side by side: their generators' steps are
               independent, so they overlap */
            for (int64_t t = t0; t < t1; t++) {
                uint32_t *y = tile + (t - t0) * B;
                const int64_t j = other_col[t];
                if (j < 0 && nb == B) { /* a whole block: a loop of a known length */
                    for (int b = 0; b < B; b++) MLSQL_DRAW_LANE(b);
                } else if (j < 0) {
                    for (int b = 0; b < nb; b++) MLSQL_DRAW_LANE(b);
                } else {
                    for (int b = 0; b < nb; b++) y[b] = (uint32_t)others[(r + b) * n_others + j];
                }
            }
            for (; c < n_cells && cell_tuple[c] < t1; c++) {
                const uint32_t *x = tile + (cell_tuple[c] - t0) * B;
                uint32_t *y = acc + cell_label[c] * B;
                for (int b = 0; b < B; b++) y[b] += x[b];
            }
        }
        for (int b = 0; b < nb; b++) {
            double *o = out + (r + b) * n_labels;
            for (int64_t l = 0; l < n_labels; l++) o[l] = (double)acc[l * B + b];
        }
    }
    free(acc);
    free(tile);
    return 0;
#else
    (void)states; (void)inc; (void)n_resamples; (void)n_tuples; (void)other_col; (void)others;
    (void)n_others; (void)table; (void)cdf; (void)n_cdf; (void)cell_tuple; (void)cell_label;
    (void)n_cells; (void)out; (void)n_labels;
    return -1;
#endif
}

/* Returns 0, or -1 where the compiler has no 128-bit integers (the caller draws raw bits). */
MLSQL_EXPORT int64_t mlsql_poisson_one_pcg64(uint64_t *state, const uint64_t *inc, int64_t n_rows,
                                             int64_t n_cols, const double *table,
                                             const double *cdf, int64_t n_cdf, double *out,
                                             int64_t out_stride, const int64_t *out_cols) {
#if MLSQL_HAS_PCG
    /* state and inc as (high word, low word) */
    mlsql_u128 s = ((mlsql_u128)state[0] << 64) | state[1];
    const mlsql_u128 c = ((mlsql_u128)inc[0] << 64) | inc[1];
    for (int64_t r = 0; r < n_rows; r++) {
        double *o = out + r * out_stride;
        for (int64_t j = 0; j < n_cols; j++)
            o[out_cols ? out_cols[j] : j] = mlsql_poisson_of(mlsql_pcg_next(&s, c), table, cdf, n_cdf);
    }
    state[0] = (uint64_t)(s >> 64);
    state[1] = (uint64_t)s;
    return 0;
#else
    (void)state; (void)inc; (void)n_rows; (void)n_cols; (void)table; (void)cdf; (void)n_cdf;
    (void)out; (void)out_stride; (void)out_cols;
    return -1;
#endif
}
