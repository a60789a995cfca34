// mlsql's JVM aggregate for Spark's centred regression statistics: a group's population
// co-moment Σw(a - ā)(b - b̄) / Σw of two DOUBLE columns a and b weighted by w (a variance
// where it is given one column), the exact fraction rounded once, in memory that does not
// grow with the group's rows. The regression Columns ask for the ones their formula reads:
// the variances of y, p and e = y - p (a DOUBLE, as every engine rounds it) and the
// covariance of y and p.
//
// Built with ExactSum.java into mlsql/_native/mlsql_spark.jar (native/build_spark.py);
// mlsql.spark.jvm makes a Spark aggregate of it (functions.udaf) and the regression
// Columns (mlsql.spark.families.regression) read r2's, rse's, pearson_corr's and
// explained_variance's statistics from it. Without it, Spark collects the group's rows
// and sums them centred on their rounded means.
//
// One streaming pass cannot centre the values on a mean it does not know yet, and a
// DOUBLE sum of y² less (Σy)²/Σw cancels (Spark's own var_pop drifts 5e-7 relative at an
// offset of 1e12). Here nothing is rounded until the end: each row's products w·a·b are
// split into DOUBLEs whose sum is exact (Dekker's two-product, by Math.fma), and these go
// into ExactSum's partials, one expansion per sum (Σw, Σw·a, Σw·b and Σw·a·b), which merge
// exactly across partitions. The finish computes the co-moment
// (Σw·Σw·a·b - Σw·a·Σw·b) / (Σw)² in BigDecimal and rounds it once: the same
// DOUBLE on any partitioning. A product below about 1e-290 loses its low bits (the
// two-product's error term underflows). Where a product overflows (|y| past 1e154) the
// co-moment is the DOUBLE sums' (infinite or NaN, as a DOUBLE formula gives). Rows with a
// NULL input are skipped; a group of none, or of zero weight, gives NULL.
package mlsql.spark;

import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;

import org.apache.spark.sql.Encoder;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.expressions.Aggregator;

public final class CoMoments extends Aggregator<Row, double[][], Double> {
  private static final long serialVersionUID = 1L;

  // The buffer's sums (each an ExactSum buffer): Σw, Σw·a, Σw·b (not with one column), Σw·a·b.
  private static final int W = 0;
  private static final int A = 1;
  private static final int B = 2;
  private static final int AB = 3;
  private static final int SUMS = 4;
  // 40 digits: the quotient's rounding error is far below a DOUBLE's half unit
  private static final MathContext DIGITS = new MathContext(40, RoundingMode.HALF_EVEN);

  @Override
  public double[][] zero() {
    double[][] b = new double[SUMS][];
    for (int i = 0; i < SUMS; i++) {
      b[i] = ExactSum.empty();
    }
    return b;
  }

  /** Adds a row of (a, w), a variance's, or of (a, b, w). */
  @Override
  public double[][] reduce(double[][] b, Row row) {
    int last = row.size() - 1;
    for (int i = 0; i <= last; i++) {
      if (row.isNullAt(i)) {
        return b;
      }
    }
    double x = row.getDouble(0);
    double y = row.getDouble(last - 1);
    double w = row.getDouble(last);
    b[W][ExactSum.COUNT] += 1;
    b[W] = ExactSum.add(b[W], w);
    scaled(b, A, w, x);
    if (last == 2) {
      b[B][ExactSum.COUNT] += 1; // a covariance's rows (none in a variance's buffer)
      scaled(b, B, w, y);
    }
    weighted(b, AB, w, x, y);
    return b;
  }

  /** Adds w·x to sum {@code i} exactly (x itself where w is 1). */
  private static void scaled(double[][] b, int i, double w, double x) {
    if (w == 1.0) {
      b[i] = ExactSum.add(b[i], x);
    } else {
      product(b, i, w, x);
    }
  }

  @Override
  public double[][] merge(double[][] a, double[][] b) {
    for (int i = 0; i < SUMS; i++) {
      a[i] = ExactSum.merged(a[i], b[i]);
    }
    return a;
  }

  @Override
  public Double finish(double[][] b) {
    if (b[W][ExactSum.COUNT] == 0 || ExactSum.result(b[W]) == 0.0) {
      return null; // no known rows, or none that weighs
    }
    return b[B][ExactSum.COUNT] == 0 ? comoment(b, A, A) : comoment(b, A, B);
  }

  @Override
  public Encoder<double[][]> bufferEncoder() {
    return Encoders.javaSerialization(double[][].class);
  }

  @Override
  public Encoder<Double> outputEncoder() {
    return Encoders.DOUBLE();
  }

  /** Adds x·y to sum {@code i} exactly: the rounded product and its error (two-product). */
  private static void product(double[][] b, int i, double x, double y) {
    double hi = x * y;
    b[i] = ExactSum.add(b[i], hi);
    if (!Double.isInfinite(hi)) {
      double lo = Math.fma(x, y, -hi);
      if (lo != 0.0) {
        b[i] = ExactSum.add(b[i], lo);
      }
    }
  }

  /** Adds w·x·y to sum {@code i} exactly: w·x split in two, each part's product with y. */
  private static void weighted(double[][] b, int i, double w, double x, double y) {
    if (w == 1.0) {
      product(b, i, x, y);
      return;
    }
    double hi = w * x;
    product(b, i, hi, y);
    if (!Double.isInfinite(hi)) {
      double lo = Math.fma(w, x, -hi);
      if (lo != 0.0) {
        product(b, i, lo, y);
      }
    }
  }

  /** The co-moment Σw(a - ā)(b - b̄) / Σw of sums {@code a} and {@code c} (their product's
   * sum is AB): exact and rounded once, or from the DOUBLE sums where one is not finite. */
  private static double comoment(double[][] b, int a, int c) {
    BigDecimal w = ExactSum.exact(b[W]);
    BigDecimal sa = ExactSum.exact(b[a]);
    BigDecimal sc = ExactSum.exact(b[c]);
    BigDecimal sac = ExactSum.exact(b[AB]);
    if (w == null || sa == null || sc == null || sac == null) {
      double n = ExactSum.result(b[W]);
      return (ExactSum.result(b[AB]) - ExactSum.result(b[a]) * ExactSum.result(b[c]) / n) / n;
    }
    BigDecimal spread = w.multiply(sac).subtract(sa.multiply(sc));
    return spread.divide(w.multiply(w), DIGITS).doubleValue();
  }
}
