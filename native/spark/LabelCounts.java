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
    private static final long serialVersionUID = 2L;
    final HashMap<Object, long[]> labels = new HashMap<>();
    final HashMap<Object, long[]> rows = new HashMap<>();
    boolean unknown;

    /** An empty buffer (Java's deserialization calls this, then {@link #readExternal}). */
    public Counts() {}

    @Override
    public void writeExternal(ObjectOutput out) throws IOException {
      out.writeBoolean(unknown);
      out.writeInt(labels.size());
      for (Map.Entry<Object, long[]> e : labels.entrySet()) {
        writeKey(out, e.getKey());
        for (long c : e.getValue()) {
          writeCount(out, c);
        }
      }
      out.writeInt(rows.size());
      for (Map.Entry<Object, long[]> e : rows.entrySet()) {
        writeKey(out, e.getKey());
        writeCount(out, e.getValue()[0]);
      }
    }

    @Override
    public void readExternal(ObjectInput in) throws IOException {
      unknown = in.readBoolean();
      for (int i = in.readInt(); i > 0; i--) {
        labels.put(readKey(in), new long[] {readCount(in), readCount(in), readCount(in)});
      }
      for (int i = in.readInt(); i > 0; i--) {
        rows.put(readKey(in), new long[] {readCount(in)});
      }
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

  /** The aggregate of lists of {@code labelType} (the type both lists were cast to). */
  public LabelCounts(DataType labelType) {
    this(labelType, BITS);
  }

  /** The same, packing row statistics below {@code 2^bits} (1 to {@link #BITS}). */
  public LabelCounts(DataType labelType, int bits) {
    if (bits < 1 || bits > BITS) {
      throw new IllegalArgumentException("mlsql: bits must be 1 to " + BITS + ", not " + bits);
    }
    this.bits = bits;
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
    long limit = 1L << bits;
    Object key =
        na < limit && np < limit
            ? (Object) (tp + (na << bits) + (np << (2 * bits)))
            : List.of(tp, na, np);
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
