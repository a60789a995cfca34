// A prototype JVM function for Spark's per-row label-set statistics (issue 30: what a Java
// function built with the JDK would add to micro_f1). Not part of mlsql: the benchmark
// benchmarks/spark_set_counts_udf.py compiles it against PySpark's own jars and times it
// beside mlsql's Spark micro_f1 and the bare scan.
//
// mlsql_set_counts(actual, predicted): NULL where either list is NULL, else tp = |A ∩ P|,
// n_actual = |A| and n_predicted = |P| over distinct non-NULL labels (DESIGN.md section 1),
// packed in one long as tp + n_actual * 2^21 + n_predicted * 2^42 (each below 2^21), so
// that the three sums of micro_f1 are three sums of bit fields of one column. Short lists
// are compared pairwise (no set is built, nothing allocated beyond Spark's conversion of
// the arrays); lists longer than SHORT use hash sets.
package mlsqlbench;

import java.util.HashSet;

import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.api.java.UDF2;
import org.apache.spark.sql.types.DataTypes;
import scala.collection.Seq;

public final class SetCounts implements UDF2<Seq<Object>, Seq<Object>, Long> {
  /** Lists up to this long are compared pairwise. */
  static final int SHORT = 32;

  /** Registers {@code mlsql_set_counts} on {@code spark}. */
  public static void register(SparkSession spark) {
    spark.udf().register("mlsql_set_counts", new SetCounts(), DataTypes.LongType);
  }

  @Override
  public Long call(Seq<Object> actual, Seq<Object> predicted) {
    if (actual == null || predicted == null) {
      return null;
    }
    Object[] a = toArray(actual);
    Object[] p = toArray(predicted);
    long tp = 0;
    long na = 0;
    long np = 0;
    if (a.length <= SHORT && p.length <= SHORT) {
      for (int i = 0; i < a.length; i++) {
        if (a[i] == null || seenBefore(a, i)) {
          continue;
        }
        na++;
        for (Object x : p) {
          if (a[i].equals(x)) {
            tp++;
            break;
          }
        }
      }
      for (int i = 0; i < p.length; i++) {
        if (p[i] != null && !seenBefore(p, i)) {
          np++;
        }
      }
    } else {
      HashSet<Object> sa = new HashSet<>();
      for (Object x : a) {
        if (x != null) {
          sa.add(x);
        }
      }
      HashSet<Object> sp = new HashSet<>();
      for (Object x : p) {
        if (x != null && sp.add(x) && sa.contains(x)) {
          tp++;
        }
      }
      na = sa.size();
      np = sp.size();
    }
    return tp + (na << 21) + (np << 42);
  }

  private static Object[] toArray(Seq<Object> s) {
    Object[] out = new Object[s.length()];
    for (int i = 0; i < out.length; i++) {
      out[i] = s.apply(i);
    }
    return out;
  }

  private static boolean seenBefore(Object[] xs, int i) {
    for (int j = 0; j < i; j++) {
      if (xs[i].equals(xs[j])) {
        return true;
      }
    }
    return false;
  }
}
