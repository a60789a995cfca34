// mlsql's JVM aggregate for Spark's per-label tables: each label's tp, fn and fp counts and
// the histogram of the rows' (|A ∩ P|, |A|, |P|), per group, in one pass over the rows.
//
// Built with SetCounts.java into mlsql/_native/mlsql_spark.jar (native/build_spark.py);
// mlsql.spark.jvm makes a Spark aggregate of it (functions.udaf) and mlsql.spark.families.
// label_based counts with it where it builds label_metrics, multilabel_report and the
// macro and weighted measures, with a sample weight too (each count is then the exact sum
// of the rows' weights, kept as mlsql.spark.exact keeps it). Without it, Spark SQL spreads
// each row over its labels (explode) and counts them per label: the same numbers.
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

import java.io.Externalizable;
import java.io.IOException;
import java.io.ObjectInput;
import java.io.ObjectOutput;
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

  /** Row statistics fit this many bits each to be packed in one long key (three in 63). */
  static final int BITS = 21;

  /**
   * A group's counts: per label {tp, fn, fp}; per row-statistics key, {rows}.
   *
   * <p>Spark serializes the buffer after each partial aggregate: it writes itself compactly (a
   * tag and the bytes or the integer of each key, variable-length counts), since Java's default
   * form of the maps records every object it writes and ran a 2 GB heap out of memory on a group
   * of two million labels.
   */
  public static final class Counts implements Externalizable {
    private static final long serialVersionUID = 3L;
    final HashMap<Object, long[]> labels = new HashMap<>();
    final HashMap<Object, long[]> rows = new HashMap<>();
    boolean unknown;
    /** Whether each count is a sum of weights ({@link #SUM} longs) rather than one long. */
    boolean weighted;

    /** An empty buffer (Java's deserialization calls this, then {@link #readExternal}). */
    public Counts() {}

    Counts(boolean weighted) {
      this.weighted = weighted;
    }

    /** The longs of one count: 1, or {@link #SUM} for a sum of weights. */
    int width() {
      return weighted ? SUM : 1;
    }

    @Override
    public void writeExternal(ObjectOutput out) throws IOException {
      out.writeBoolean(weighted);
      out.writeBoolean(unknown);
      for (HashMap<Object, long[]> map : List.of(labels, rows)) {
        out.writeInt(map.size());
        for (Map.Entry<Object, long[]> e : map.entrySet()) {
          writeKey(out, e.getKey());
          for (long c : e.getValue()) {
            if (weighted) {
              out.writeLong(c); // parts of either sign, a DOUBLE's bits
            } else {
              writeCount(out, c);
            }
          }
        }
      }
    }

    @Override
    public void readExternal(ObjectInput in) throws IOException {
      weighted = in.readBoolean();
      unknown = in.readBoolean();
      int kinds = 3;
      for (HashMap<Object, long[]> map : List.of(labels, rows)) {
        for (int i = in.readInt(); i > 0; i--) {
          Object key = readKey(in);
          long[] c = new long[kinds * width()];
          for (int j = 0; j < c.length; j++) {
            c[j] = weighted ? in.readLong() : readCount(in);
          }
          map.put(key, c);
        }
        kinds = 1;
      }
    }
  }

  // A sum of weights is kept as mlsql.spark.exact keeps it in Spark SQL (limb_sum_sql), so
  // the two forms give the same DOUBLE to the bit: a weight below the bound is cut into its
  // whole part and three 21-bit parts of its fraction (the last rounded), each summed as a
  // long, so in any order; a count whose weights include one at the bound or over (or a
  // NaN) is their DOUBLE sum. Its longs: the four parts' sums, whether any weight was at the
  // bound, and the bits of the weights' DOUBLE sum.
  static final int SUM = 6;
  private static final int PLAIN = 4;
  private static final int DOUBLE_SUM = 5;
  private static final long STEP = 1L << 21;

  /** A weight's six longs (its parts, whether it is at {@code bound} or over, its bits). */
  static long[] parts(double w, double bound) {
    boolean plain = Double.isNaN(w) || Math.abs(w) >= bound;
    double kept = plain ? 0.0 : w;
    double s1 = kept * 2097152.0; // 2^21
    double s2 = kept * 4398046511104.0; // 2^42
    long t0 = (long) kept;
    long t1 = (long) s1;
    long t2 = (long) s2;
    long rest = (long) Math.rint((s2 - (double) t2) * 2097152.0);
    return new long[] {
      t0, t1 - t0 * STEP, t2 - t1 * STEP, rest, plain ? 1 : 0, Double.doubleToRawLongBits(w)
    };
  }

  /** The DOUBLE the sum at {@code c[o..o + SUM)} comes to (exact.py's _combined, _total). */
  static double total(long[] c, int o) {
    if (c[o + PLAIN] != 0) {
      return Double.longBitsToDouble(c[o + DOUBLE_SUM]);
    }
    long mask = STEP - 1;
    long carried = c[o + 3];
    long low0 = carried & mask;
    carried = c[o + 2] + (carried >> 21);
    long low1 = carried & mask;
    carried = c[o + 1] + (carried >> 21);
    long low2 = carried & mask;
    carried = c[o] + (carried >> 21);
    long fraction = (low2 * STEP + low1) * STEP + low0;
    boolean positive = carried >= 0;
    long whole = positive ? carried : carried + 1;
    if (!positive) {
      long half = -(1L << 62);
      fraction = fraction + half + half;
    }
    return (double) whole + (double) fraction * 0x1p-63;
  }

  /** Counts one row in count {@code kind} of {@code c}: one, or the row's weight {@code w}. */
  private static void add(long[] c, int kind, long[] w) {
    if (w == null) {
      c[kind]++;
      return;
    }
    int o = kind * SUM;
    for (int i = 0; i < PLAIN; i++) {
      c[o + i] += w[i];
    }
    c[o + PLAIN] |= w[PLAIN];
    double sum = Double.longBitsToDouble(c[o + DOUBLE_SUM]) + Double.longBitsToDouble(w[DOUBLE_SUM]);
    c[o + DOUBLE_SUM] = Double.doubleToRawLongBits(sum);
  }

  /** Adds the counts {@code d} into {@code c} (each of {@code width} longs). */
  private static void addAll(long[] c, long[] d, int width) {
    if (width == 1) {
      for (int i = 0; i < c.length; i++) {
        c[i] += d[i];
      }
      return;
    }
    for (int o = 0; o < c.length; o += SUM) {
      long[] w = Arrays.copyOfRange(d, o, o + SUM);
      add(c, o / SUM, w);
    }
  }

  // The kinds of key a buffer holds, as written: a BINARY label, an integer label of each
  // width (a label keeps its Java class, so merged buffers compare alike), a packed
  // row-statistics key (a Long as well), and an unpacked one.
  private static final int BYTES = 0;
  private static final int LONG = 1;
  private static final int INT = 2;
  private static final int SHORT_INT = 3;
  private static final int BYTE = 4;
  private static final int TRIPLE = 5;

  private static void writeKey(ObjectOutput out, Object key) throws IOException {
    if (key instanceof Bytes) {
      byte[] b = ((Bytes) key).bytes;
      out.writeByte(BYTES);
      out.writeInt(b.length);
      out.write(b);
    } else if (key instanceof Long) {
      out.writeByte(LONG);
      out.writeLong((Long) key);
    } else if (key instanceof Integer) {
      out.writeByte(INT);
      out.writeInt((Integer) key);
    } else if (key instanceof Short) {
      out.writeByte(SHORT_INT);
      out.writeShort((Short) key);
    } else if (key instanceof Byte) {
      out.writeByte(BYTE);
      out.writeByte((Byte) key);
    } else if (key instanceof List) {
      out.writeByte(TRIPLE);
      for (Object x : (List<?>) key) {
        out.writeLong((Long) x);
      }
    } else {
      throw new IllegalStateException("mlsql: a label of Java class " + key.getClass());
    }
  }

  private static Object readKey(ObjectInput in) throws IOException {
    int kind = in.readByte();
    switch (kind) {
      case BYTES:
        byte[] b = new byte[in.readInt()];
        in.readFully(b);
        return new Bytes(b);
      case LONG:
        return in.readLong();
      case INT:
        return in.readInt();
      case SHORT_INT:
        return in.readShort();
      case BYTE:
        return in.readByte();
      case TRIPLE:
        return List.of(in.readLong(), in.readLong(), in.readLong());
      default:
        throw new IllegalStateException("mlsql: a buffer key of kind " + kind);
    }
  }

  /** A count (never negative) in 7-bit groups, low first: one byte below 128. */
  private static void writeCount(ObjectOutput out, long c) throws IOException {
    while ((c & ~0x7FL) != 0) {
      out.writeByte((int) ((c & 0x7F) | 0x80));
      c >>>= 7;
    }
    out.writeByte((int) c);
  }

  private static long readCount(ObjectInput in) throws IOException {
    long c = 0;
    for (int shift = 0; ; shift += 7) {
      int b = in.readByte();
      c |= (long) (b & 0x7F) << shift;
      if ((b & 0x80) == 0) {
        return c;
      }
    }
  }

  /** A BINARY label: compared and hashed by its bytes. */
  static final class Bytes {
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

  /** The width of a packed row statistic: {@link #BITS}, fewer to test the unpacked keys. */
  private final int bits;

  /** Whether a row has a third field, its weight (a DOUBLE), and counts are its sums. */
  private final boolean weighted;

  /** Weights this large or larger are summed as DOUBLE (mlsql.spark.exact.BOUND). */
  private final double bound;

  /** The aggregate of lists of {@code labelType} (the type both lists were cast to). */
  public LabelCounts(DataType labelType) {
    this(labelType, BITS, false, 0.0);
  }

  /**
   * The same, packing row statistics below {@code 2^bits} (1 to {@link #BITS}); with {@code
   * weighted}, of rows (actual, predicted, weight), each count the sum of the rows' weights
   * (summed exactly below {@code bound}).
   */
  public LabelCounts(DataType labelType, int bits, boolean weighted, double bound) {
    if (bits < 1 || bits > BITS) {
      throw new IllegalArgumentException("mlsql: bits must be 1 to " + BITS + ", not " + bits);
    }
    this.bits = bits;
    this.weighted = weighted;
    this.bound = bound;
    DataType count = weighted ? DataTypes.DoubleType : DataTypes.LongType;
    StructType cell =
        new StructType(
            new StructField[] {
              DataTypes.createStructField("label", labelType, true),
              DataTypes.createStructField("row_tp", DataTypes.LongType, true),
              DataTypes.createStructField("row_n_actual", DataTypes.LongType, true),
              DataTypes.createStructField("row_n_predicted", DataTypes.LongType, true),
              DataTypes.createStructField("tp", count, false),
              DataTypes.createStructField("fn", count, false),
              DataTypes.createStructField("fp", count, false),
              DataTypes.createStructField("row", count, false),
            });
    output =
        new StructType(
            new StructField[] {
              DataTypes.createStructField("cells", DataTypes.createArrayType(cell, false), false),
            });
  }

  @Override
  public Counts zero() {
    return new Counts(weighted);
  }

  @Override
  public Counts reduce(Counts counts, Row row) {
    if (row.isNullAt(0) || row.isNullAt(1) || (weighted && row.isNullAt(2))) {
      counts.unknown = true;
      return counts;
    }
    long[] w = weighted ? parts(row.getDouble(2), bound) : null;
    int width = counts.width();
    Object[] a = distinct(row.<Object>getSeq(0));
    Object[] p = distinct(row.<Object>getSeq(1));
    boolean pairwise = a.length <= SHORT && p.length <= SHORT;
    HashSet<Object> inA = pairwise ? null : new HashSet<>(Arrays.asList(a));
    HashSet<Object> inP = pairwise ? null : new HashSet<>(Arrays.asList(p));
    long tp = 0;
    for (Object x : a) {
      long[] c = slot(counts.labels, x, 3 * width);
      if (pairwise ? contains(p, x) : inP.contains(x)) {
        add(c, 0, w);
        tp++;
      } else {
        add(c, 1, w);
      }
    }
    for (Object y : p) {
      if (!(pairwise ? contains(a, y) : inA.contains(y))) {
        add(slot(counts.labels, y, 3 * width), 2, w);
      }
    }
    long na = a.length;
    long np = p.length;
    long limit = 1L << bits;
    Object key =
        na < limit && np < limit
            ? (Object) (tp + (na << bits) + (np << (2 * bits)))
            : List.of(tp, na, np);
    add(slot(counts.rows, key, width), 0, w);
    return counts;
  }

  @Override
  public Counts merge(Counts into, Counts from) {
    int width = into.width();
    for (Map.Entry<Object, long[]> e : from.labels.entrySet()) {
      addAll(slot(into.labels, e.getKey(), 3 * width), e.getValue(), width);
    }
    for (Map.Entry<Object, long[]> e : from.rows.entrySet()) {
      addAll(slot(into.rows, e.getKey(), width), e.getValue(), width);
    }
    into.unknown |= from.unknown;
    return into;
  }

  @Override
  public Row finish(Counts counts) {
    Object zero = weighted ? (Object) 0.0 : (Object) 0L;
    List<Row> cells = new ArrayList<>(counts.labels.size() + counts.rows.size() + 1);
    for (Map.Entry<Object, long[]> e : counts.labels.entrySet()) {
      Object key = e.getKey();
      Object label = key instanceof Bytes ? ((Bytes) key).bytes : key;
      long[] c = e.getValue();
      cells.add(RowFactory.create(label, null, null, null, count(c, 0), count(c, 1), count(c, 2), zero));
    }
    for (Map.Entry<Object, long[]> e : counts.rows.entrySet()) {
      long tp;
      long na;
      long np;
      if (e.getKey() instanceof Long) {
        long packed = (Long) e.getKey();
        long mask = (1L << bits) - 1;
        tp = packed & mask;
        na = (packed >>> bits) & mask;
        np = packed >>> (2 * bits);
      } else {
        List<?> triple = (List<?>) e.getKey();
        tp = (Long) triple.get(0);
        na = (Long) triple.get(1);
        np = (Long) triple.get(2);
      }
      cells.add(RowFactory.create(null, tp, na, np, zero, zero, zero, count(e.getValue(), 0)));
    }
    if (counts.unknown) {
      cells.add(RowFactory.create(null, null, null, null, zero, zero, zero, zero));
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

  /** Count {@code kind} of {@code c}: a long, or the DOUBLE a sum of weights comes to. */
  private Object count(long[] c, int kind) {
    return weighted ? (Object) total(c, kind * SUM) : (Object) c[kind];
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
