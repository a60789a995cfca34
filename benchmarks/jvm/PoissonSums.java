// A prototype JVM aggregator for the Spark bootstrap of numbers (issue 30, item 2's question:
// what a Java aggregate built with the JDK would add). Not part of mlsql: the benchmark
// benchmarks/spark_jvm_aggregator.py compiles it against PySpark's own jars and times it
// beside mlsql's executor bootstrap.
//
// Input per distinct (y, p) tuple of a group: y, p and m, the rows holding it. For each
// resample r it draws k ~ Poisson(m) by inverse CDF from a uniform of Spark's xxhash64 of
// (seed, r, y, p), as mlsql.spark.resample_draw does with SQL expressions, and adds
// k (y - p)^2 and k to the resample's two sums. The buffer is 2 R doubles per group, however
// many rows it has: the draws never leave the executor's loop.
package mlsqlbench;

import java.io.Serializable;

import org.apache.spark.sql.Encoder;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.expressions.XXH64;
import org.apache.spark.sql.expressions.Aggregator;
import org.apache.spark.sql.functions;
import scala.Tuple3;

public final class PoissonSums extends Aggregator<Tuple3<Double, Double, Long>, PoissonSums.Buf, PoissonSums.Buf> {
  /** The running sums of one group: 2 R doubles. */
  public static final class Buf implements Serializable {
    public double[] s;
    public Buf() {}
    public Buf(int n) { s = new double[n]; }
    public double[] getS() { return s; }
    public void setS(double[] v) { s = v; }
  }

  private final int resamples;
  private final long seed;

  public PoissonSums(int resamples, long seed) {
    this.resamples = resamples;
    this.seed = seed;
  }

  /** Registers poisson_sums(y, p, m) on the session. */
  public static void register(SparkSession spark, int resamples, long seed) {
    spark.udf().register(
        "poisson_sums",
        functions.udaf(
            new PoissonSums(resamples, seed),
            Encoders.tuple(Encoders.DOUBLE(), Encoders.DOUBLE(), Encoders.LONG())));
  }

  @Override public Buf zero() { return new Buf(2 * resamples); }

  /** The smallest k whose Poisson(m) CDF reaches u (the pmf by recurrence from k = 0). */
  static int draw(long m, double u) {
    double pmf = Math.exp(-(double) m), cdf = pmf;
    int k = 0;
    while (cdf < u && k < 100000) {
      k++;
      pmf *= (double) m / k;
      cdf += pmf;
    }
    return k;
  }

  @Override public Buf reduce(Buf b, Tuple3<Double, Double, Long> row) {
    if (row._1() == null || row._2() == null) return b;
    double y = row._1(), p = row._2(), e = (y - p) * (y - p);
    long m = row._3();
    long base = XXH64.hashLong(Double.doubleToLongBits(p), XXH64.hashLong(Double.doubleToLongBits(y), seed));
    double[] s = b.s;
    for (int r = 0; r < resamples; r++) {
      long h = XXH64.hashInt(r, base);
      double u = ((h >>> 11) + 0.5) / 9007199254740992.0;
      int k = draw(m, u);
      if (k != 0) {
        s[2 * r] += k * e;
        s[2 * r + 1] += k;
      }
    }
    return b;
  }

  @Override public Buf merge(Buf a, Buf b) {
    for (int i = 0; i < a.s.length; i++) a.s[i] += b.s[i];
    return a;
  }

  @Override public Buf finish(Buf b) { return b; }

  @Override public Encoder<Buf> bufferEncoder() { return Encoders.bean(Buf.class); }

  @Override public Encoder<Buf> outputEncoder() { return Encoders.bean(Buf.class); }
}
