// mlsql's JVM function for Spark: a row's label-set statistics in one call.
//
// Built by native/build_spark.py (the package's build hook) with the JDK against PySpark's
// own jars into mlsql/_native/mlsql_spark.jar; mlsql.spark.jvm adds the jar to a classic
// session and calls the function where it builds a row's statistics (mlsql.spark.stats).
// Without it, Spark SQL's array functions give the same numbers.
//
// SetCounts(actual, predicted): NULL where either list is NULL, else tp = |A ∩ P|,
// n_actual = |A| and n_predicted = |P| over distinct non-NULL labels (DESIGN.md section 1),
// packed in one long as tp + n_actual * 2^21 + n_predicted * 2^42, so that a formula's
// three sums are sums of bit fields of one column. A row with 2^21 or more distinct labels
// on a side gives NULL too: the caller computes every NULL row with Spark SQL (for a NULL
// list, a NULL at once). Short lists are compared
// pairwise (no set is built, nothing allocated beyond Spark's conversion of the arrays);
// longer lists use hash sets. Labels are compared as Spark compares them: strings by their
// characters, integers by value whatever their width. A row with a string Java cannot tell
// apart from Spark's bytes (U+FFFD, which decoding invalid UTF-8 gives) is NULL too, and
// strings under a collation never reach the function (mlsql.spark.jvm).
package mlsql.spark;

import java.util.HashSet;

import org.apache.spark.sql.api.java.UDF2;
import scala.collection.Seq;

public final class SetCounts implements UDF2<Seq<Object>, Seq<Object>, Long> {
  /** Lists up to this long are compared pairwise. */
  static final int SHORT = 32;

  /** A count this large or larger does not fit its 21 bits: the row gives NULL. */
  static final long LIMIT = 1L << 21;

  @Override
  public Long call(Seq<Object> actual, Seq<Object> predicted) {
    if (actual == null || predicted == null) {
      return null;
    }
    Object[] a = toArray(actual);
    Object[] p = toArray(predicted);
    if (a == null || p == null) {
      return null;
    }
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
    if (na >= LIMIT || np >= LIMIT) {
      return null;
    }
    return tp + (na << 21) + (np << 42);
  }

  /** The labels of {@code s}, integers as longs; null where the row is left to Spark SQL. */
  private static Object[] toArray(Seq<Object> s) {
    Object[] out = new Object[s.length()];
    for (int i = 0; i < out.length; i++) {
      Object x = s.apply(i);
      // Spark compares an int list with a bigint list as bigints (array_intersect's
      // common type); a Java Integer never equals a Long, so every integer is a Long here
      if (x instanceof Integer || x instanceof Short || x instanceof Byte) {
        x = Long.valueOf(((Number) x).longValue());
      } else if (x instanceof String && ((String) x).indexOf('\uFFFD') >= 0) {
        // Spark decoded invalid UTF-8 into U+FFFD, where it compares the bytes: leave the row
        // to Spark SQL
        return null;
      }
      out[i] = x;
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
