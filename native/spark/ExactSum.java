// mlsql's JVM aggregate for Spark's exact sums: the sum of a group's DOUBLE values, rounded
// once, as Python's math.fsum rounds it, whatever the order the rows arrive in.
//
// Built with SetCounts.java into mlsql/_native/mlsql_spark.jar (native/build_spark.py);
// mlsql.spark.jvm makes a Spark aggregate of it (functions.udaf) and mlsql.spark.ops.
// exact_sum sums with it where the jar is used. Without it, Spark SQL sums each value as a
// DECIMAL(38, 18) (values below 1e6) or as a DOUBLE: within 1e-12 relative of this sum.
//
// The buffer holds Shewchuk's non-overlapping partials (J. R. Shewchuk, "Adaptive
// Precision Floating-Point Arithmetic and Fast Robust Geometric Predicates", 1997; the
// algorithm of Python's math.fsum and of msum in the Python recipes): their exact sum is
// the exact sum of the values added so far, so partial aggregates merge exactly, and the
// result is the same DOUBLE on any partitioning. A group's partials are few (one to three
// for values of like magnitude; at most about forty for any DOUBLEs), so its memory does
// not grow with its rows. NULL values are skipped; a group of none sums to NULL. A NaN or
// an infinity makes the sum their DOUBLE sum (NaN for +inf and -inf together); where an
// intermediate sum of finite values overflows (|sum| near 1.8e308), the sum is the values'
// plain DOUBLE sum.
package mlsql.spark;

import java.math.BigDecimal;
import java.util.Arrays;

import org.apache.spark.sql.Encoder;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.expressions.Aggregator;

public final class ExactSum extends Aggregator<Double, double[], Double> {
  private static final long serialVersionUID = 1L;

  // The buffer's slots: the count of non-NULL values, the sum of the NaNs and infinities,
  // the plain DOUBLE sum of the finite values, whether an intermediate sum overflowed (1),
  // the number of partials, then the partials (the array grows as they do).
  static final int COUNT = 0;
  private static final int SPECIAL = 1;
  private static final int PLAIN = 2;
  private static final int OVERFLOW = 3;
  private static final int SIZE = 4;
  private static final int FIRST = 5;

  @Override
  public double[] zero() {
    return empty();
  }

  /** A buffer of no values. */
  static double[] empty() {
    return new double[FIRST + 4];
  }

  @Override
  public double[] reduce(double[] b, Double x) {
    if (x == null) {
      return b;
    }
    b[COUNT] += 1;
    return add(b, x);
  }

  @Override
  public double[] merge(double[] a, double[] b) {
    return merged(a, b);
  }

  /** {@code a} with {@code b}'s values added (exactly: each of b's partials). */
  static double[] merged(double[] a, double[] b) {
    a[COUNT] += b[COUNT];
    a[SPECIAL] += b[SPECIAL];
    a[PLAIN] += b[PLAIN];
    a[OVERFLOW] = Math.max(a[OVERFLOW], b[OVERFLOW]);
    int n = (int) b[SIZE];
    for (int i = 0; i < n; i++) {
      a = partial(a, b[FIRST + i]);
    }
    return a;
  }

  @Override
  public Double finish(double[] b) {
    if (b[COUNT] == 0) {
      return null;
    }
    return result(b);
  }

  /** The sum of {@code b}'s values (0.0 over none), as {@link #finish} gives it. */
  static double result(double[] b) {
    if (b[SPECIAL] != 0) { // a NaN or an infinity was summed (NaN != 0 holds too)
      return b[SPECIAL];
    }
    if (b[OVERFLOW] != 0) {
      return b[PLAIN];
    }
    return rounded(b);
  }

  @Override
  public Encoder<double[]> bufferEncoder() {
    return Encoders.javaSerialization(double[].class);
  }

  @Override
  public Encoder<Double> outputEncoder() {
    return Encoders.DOUBLE();
  }

  /** The exact sum of {@code b}'s values (zero over none), or null where a NaN or an infinity
   * was summed or an intermediate sum overflowed. */
  static BigDecimal exact(double[] b) {
    if (b[SPECIAL] != 0 || b[OVERFLOW] != 0) {
      return null;
    }
    BigDecimal sum = BigDecimal.ZERO;
    int n = (int) b[SIZE];
    for (int i = 0; i < n; i++) {
      sum = sum.add(new BigDecimal(b[FIRST + i]));
    }
    return sum;
  }

  /** {@code b} with the value {@code x} added (a NaN or an infinity to the special sum);
   * its count is the caller's. */
  static double[] add(double[] b, double x) {
    if (Double.isNaN(x) || Double.isInfinite(x)) {
      b[SPECIAL] += x;
      return b;
    }
    b[PLAIN] += x;
    return partial(b, x);
  }

  /** {@code b} with the finite {@code x} added to its partials (Shewchuk's grow-expansion). */
  private static double[] partial(double[] b, double x) {
    if (b[OVERFLOW] != 0) {
      return b;
    }
    int n = (int) b[SIZE];
    int kept = 0;
    for (int j = 0; j < n; j++) {
      double y = b[FIRST + j];
      if (Math.abs(x) < Math.abs(y)) {
        double t = x;
        x = y;
        y = t;
      }
      double hi = x + y;
      double lo = y - (hi - x);
      if (lo != 0.0) {
        b[FIRST + kept++] = lo;
      }
      x = hi;
    }
    if (Double.isInfinite(x)) {
      b[OVERFLOW] = 1;
      return b;
    }
    if (x != 0.0) { // a zero adds nothing (so a sum of zeros is 0.0, as math.fsum's)
      if (FIRST + kept == b.length) {
        b = Arrays.copyOf(b, 2 * b.length);
      }
      b[FIRST + kept++] = x;
    }
    b[SIZE] = kept;
    return b;
  }

  /** The exact sum of the partials, rounded once to the nearest DOUBLE (ties to even), as
   * math.fsum rounds it: the largest partials are added until one addition is inexact, and
   * the half-way case is decided by the sign of the next partial. */
  private static double rounded(double[] b) {
    int n = (int) b[SIZE];
    if (n == 0) {
      return 0.0;
    }
    double hi = b[FIRST + --n];
    double lo = 0.0;
    while (n > 0) {
      double x = hi;
      double y = b[FIRST + --n];
      hi = x + y;
      double yr = hi - x;
      lo = y - yr;
      if (lo != 0.0) {
        break;
      }
    }
    if (n > 0 && ((lo < 0.0 && b[FIRST + n - 1] < 0.0) || (lo > 0.0 && b[FIRST + n - 1] > 0.0))) {
      double y = lo * 2.0;
      double x = hi + y;
      double yr = x - hi;
      if (y == yr) {
        hi = x;
      }
    }
    return hi;
  }
}
