/*
 * mlsql's resample kernels (plain C11, no dependency beyond the C library), loaded with
 * ctypes by mlsql/_resample/native.py. Each gives exactly the numbers of the portable numpy
 * code it replaces (same additions in the same order, same table and search).
 *
 * mlsql_label_sums: per-label weighted sums of a sparse 0/1 (tuples x labels) matrix under a
 * batch of resample weights, read row by row (each resample's weights in tuple order, a block
 * of resamples per pass over the cells). The
 * cells come in tuple order, a label's cells in ascending tuples; each label sums its cells
 * in that order from 0, as numpy.add.at does in the portable code.
 *
 * mlsql_poisson_one: Poisson(1) by the inverse CDF of uniforms from a generator's raw 64 bits:
 * a table of the 4096 top-12-bit cells (a value, or -1 where a cell straddles a step of the
 * CDF, then searched as searchsorted(cdf, u, 'right') with u = (raw >> 11) / 2^53).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(_WIN32)
#define MLSQL_EXPORT __declspec(dllexport)
#else
#define MLSQL_EXPORT __attribute__((visibility("default")))
#endif

MLSQL_EXPORT int64_t mlsql_resample_version(void) { return 2; }

/* resamples summed in one pass over the cells (the cells are read once per block) */
#define MLSQL_BLOCK 8

MLSQL_EXPORT void mlsql_label_sums(const double *w, int64_t n_resamples, int64_t n_tuples,
                                   const int64_t *cell_tuple, const int64_t *cell_label,
                                   int64_t n_cells, double *out, int64_t n_labels) {
    for (int64_t i = 0; i < n_resamples * n_labels; i++) out[i] = 0.0;
    int64_t r = 0;
    for (; r + MLSQL_BLOCK <= n_resamples; r += MLSQL_BLOCK) {
        const double *row = w + r * n_tuples;
        double *o = out + r * n_labels;
        for (int64_t c = 0; c < n_cells; c++) {
            const double *x = row + cell_tuple[c];
            double *y = o + cell_label[c];
            for (int b = 0; b < MLSQL_BLOCK; b++) y[b * n_labels] += x[b * n_tuples];
        }
    }
    for (; r < n_resamples; r++) {
        const double *row = w + r * n_tuples;
        double *o = out + r * n_labels;
        for (int64_t c = 0; c < n_cells; c++) o[cell_label[c]] += row[cell_tuple[c]];
    }
}

MLSQL_EXPORT void mlsql_poisson_one(const uint64_t *raw, int64_t n_rows, int64_t n_cols,
                                    const double *table, const double *cdf, int64_t n_cdf,
                                    double *out, int64_t out_stride, const int64_t *out_cols) {
    const double two_53 = 9007199254740992.0;
    for (int64_t r = 0; r < n_rows; r++) {
        const uint64_t *bits = raw + r * n_cols;
        double *o = out + r * out_stride;
        for (int64_t j = 0; j < n_cols; j++) {
            uint64_t x = bits[j];
            double k = table[x >> 52];
            if (k < 0) {
                double u = (double)(x >> 11) / two_53;
                int64_t lo = 0, hi = n_cdf; /* the number of cdf values <= u */
                while (lo < hi) {
                    int64_t mid = lo + (hi - lo) / 2;
                    if (cdf[mid] <= u) lo = mid + 1;
                    else hi = mid;
                }
                k = (double)lo;
            }
            o[out_cols ? out_cols[j] : j] = k;
        }
    }
}
