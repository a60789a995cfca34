// mlsql's JVM aggregate for Spark's per-label tables: each label's tp, fn and fp counts and
// the histogram of the rows' (|A ∩ P|, |A|, |P|), per group, in one pass over the rows.
//
// Built with SetCounts.java into mlsql/_native/mlsql_spark.jar (native/build_spark.py);
// mlsql.spark.jvm makes a Spark aggregate of it (functions.udaf) and mlsql.spark.families.
// label_based counts with it where it builds label_metrics, multilabel_report and the
// macro and weighted measures without a sample weight. Without it, Spark SQL spreads each
// row over its labels (explode) and counts them per label: the same numbers.
//
// The input is a row of two label lists (Spark casts both to one type first; text comes as
// BINARY, so labels are compared by their bytes as Spark compares strings, invalid UTF-8
// included). Labels are counted over distinct non-NULL labels (DESIGN.md section 1). A row
// with a NULL list adds no counts and marks the group as holding an unknown row. Memory
// grows with the distinct labels and distinct (tp, |A|, |P|) triples of a group, never with
// its rows; the counts are longs, so they add up alike in any order and on any partitioning.
//
// The result is one struct per group, `cells`: an array of (label, row_tp, row_n_actual,
// row_n_predicted, tp, fn, fp, row), the rows Spark SQL's GROUP BY of the spread gives: a
// label's row has its three counts (row 0) and NULL row statistics; a row-statistics row has
// a NULL label, zero label counts and `row` rows; a group with an unknown row has one row of
// NULL keys and zero counts.
package mlsql.spark;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;

import org.apache.spark.sql.Encoder;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.expressions.Aggregator;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import scala.collection.Seq;
import scala.jdk.javaapi.CollectionConverters;

public final class LabelCounts extends Aggregator<Row, LabelCounts.Counts, Row> {
  private static final long serialVersionUID = 1L;

  /** Lists up to this long are compared pairwise; longer ones through hash sets. */
  static final int SHORT = 32;

  /** Row statistics below this fit 21 bits each and are packed in one long key. */
  static final long LIMIT = 1L << 21;

  /** A group's counts: per label {tp, fn, fp}; per row-statistics key, {rows}. */
  public static final class Counts implements Serializable {
    private static final long serialVersionUID = 1L;
    final HashMap<Object, long[]> labels = new HashMap<>();
    final HashMap<Object, long[]> rows = new HashMap<>();
    boolean unknown;
  }

  /** A BINARY label: compared and hashed by its bytes. */
  static final class Bytes implements Serializable {
    private static final long serialVersionUID = 1L;
    final byte[] bytes;
    final int hash;

    Bytes(byte[] bytes) {
      this.bytes = bytes;
      this.hash = Arrays.hashCode(bytes);
    }

    @Override
    public int hashCode() {
      return hash;
    }

    @Override
    public boolean equals(Object other) {
      return other instanceof Bytes && Arrays.equals(bytes, ((Bytes) other).bytes);
    }
  }

  private final StructType output;

  /** The aggregate of lists of {@code labelType} (the type both lists were cast to). */
  public LabelCounts(DataType labelType) {
    StructType cell =
        new StructType(
            new StructField[] {
              DataTypes.createStructField("label", labelType, true),
              DataTypes.createStructField("row_tp", DataTypes.LongType, true),
              DataTypes.createStructField("row_n_actual", DataTypes.LongType, true),
              DataTypes.createStructField("row_n_predicted", DataTypes.LongType, true),
              DataTypes.createStructField("tp", DataTypes.LongType, false),
              DataTypes.createStructField("fn", DataTypes.LongType, false),
              DataTypes.createStructField("fp", DataTypes.LongType, false),
              DataTypes.createStructField("row", DataTypes.LongType, false),
            });
    output =
        new StructType(
            new StructField[] {
              DataTypes.createStructField("cells", DataTypes.createArrayType(cell, false), false),
            });
  }

  @Override
  public Counts zero() {
    return new Counts();
  }

  @Override
  public Counts reduce(Counts counts, Row row) {
    if (row.isNullAt(0) || row.isNullAt(1)) {
      counts.unknown = true;
      return counts;
    }
    Object[] a = distinct(row.<Object>getSeq(0));
    Object[] p = distinct(row.<Object>getSeq(1));
    boolean pairwise = a.length <= SHORT && p.length <= SHORT;
    HashSet<Object> inA = pairwise ? null : new HashSet<>(Arrays.asList(a));
    HashSet<Object> inP = pairwise ? null : new HashSet<>(Arrays.asList(p));
    long tp = 0;
    for (Object x : a) {
      long[] c = slot(counts.labels, x, 3);
      if (pairwise ? contains(p, x) : inP.contains(x)) {
        c[0]++;
        tp++;
      } else {
        c[1]++;
      }
    }
    for (Object y : p) {
      if (!(pairwise ? contains(a, y) : inA.contains(y))) {
        slot(counts.labels, y, 3)[2]++;
      }
    }
    long na = a.length;
    long np = p.length;
    Object key =
        na < LIMIT && np < LIMIT ? (Object) (tp + (na << 21) + (np << 42)) : List.of(tp, na, np);
    slot(counts.rows, key, 1)[0]++;
    return counts;
  }

  @Override
  public Counts merge(Counts into, Counts from) {
    for (Map.Entry<Object, long[]> e : from.labels.entrySet()) {
      long[] c = slot(into.labels, e.getKey(), 3);
      long[] d = e.getValue();
      c[0] += d[0];
      c[1] += d[1];
      c[2] += d[2];
    }
    for (Map.Entry<Object, long[]> e : from.rows.entrySet()) {
      slot(into.rows, e.getKey(), 1)[0] += e.getValue()[0];
    }
    into.unknown |= from.unknown;
    return into;
  }

  @Override
  public Row finish(Counts counts) {
    List<Row> cells = new ArrayList<>(counts.labels.size() + counts.rows.size() + 1);
    for (Map.Entry<Object, long[]> e : counts.labels.entrySet()) {
      Object key = e.getKey();
      Object label = key instanceof Bytes ? ((Bytes) key).bytes : key;
      long[] c = e.getValue();
      cells.add(RowFactory.create(label, null, null, null, c[0], c[1], c[2], 0L));
    }
    for (Map.Entry<Object, long[]> e : counts.rows.entrySet()) {
      long tp;
      long na;
      long np;
      if (e.getKey() instanceof Long) {
        long packed = (Long) e.getKey();
        tp = packed & (LIMIT - 1);
        na = (packed >>> 21) & (LIMIT - 1);
        np = packed >>> 42;
      } else {
        List<?> triple = (List<?>) e.getKey();
        tp = (Long) triple.get(0);
        na = (Long) triple.get(1);
        np = (Long) triple.get(2);
      }
      cells.add(RowFactory.create(null, tp, na, np, 0L, 0L, 0L, e.getValue()[0]));
    }
    if (counts.unknown) {
      cells.add(RowFactory.create(null, null, null, null, 0L, 0L, 0L, 0L));
    }
    return RowFactory.create(CollectionConverters.asScala(cells).toSeq());
  }

  @Override
  public Encoder<Counts> bufferEncoder() {
    return Encoders.javaSerialization(Counts.class);
  }

  @Override
  public Encoder<Row> outputEncoder() {
    return Encoders.row(output);
  }

  /** The distinct non-NULL labels of {@code s} (BINARY ones as {@link Bytes}). */
  private static Object[] distinct(Seq<Object> s) {
    int n = s.length();
    Object[] out = new Object[n];
    int k = 0;
    HashSet<Object> seen = n <= SHORT ? null : new HashSet<>();
    for (int i = 0; i < n; i++) {
      Object x = s.apply(i);
      if (x == null) {
        continue;
      }
      if (x instanceof byte[]) {
        x = new Bytes((byte[]) x);
      }
      if (seen == null ? !contains(out, k, x) : seen.add(x)) {
        out[k++] = x;
      }
    }
    return k == n ? out : Arrays.copyOf(out, k);
  }

  private static boolean contains(Object[] xs, Object x) {
    return contains(xs, xs.length, x);
  }

  private static boolean contains(Object[] xs, int n, Object x) {
    for (int i = 0; i < n; i++) {
      if (xs[i].equals(x)) {
        return true;
      }
    }
    return false;
  }

  private static long[] slot(HashMap<Object, long[]> map, Object key, int size) {
    long[] c = map.get(key);
    if (c == null) {
      c = new long[size];
      map.put(key, c);
    }
    return c;
  }
}
