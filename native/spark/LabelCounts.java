// mlsql's JVM aggregate for Spark's per-label tables: each label's tp, fn and fp counts and
// the histogram of the rows' (|A ∩ P|, |A|, |P|), per group, in one pass over the rows.
//
// Built with the other classes into mlsql/_native/mlsql_spark.jar (native/build_spark.py);
// mlsql.spark.jvm wraps it in a Column and mlsql.spark.families.label_based counts with it
// where it builds label_metrics, multilabel_report and the macro and weighted measures,
// with a sample weight too (each count is then the exact sum of the rows' weights, kept as
// mlsql.spark.exact keeps it). Without it, Spark SQL spreads each row over its labels
// (explode) and counts them per label: the same numbers.
//
// LabelCounts(actual, predicted[, weight]) over two lists of one type (Spark casts both to
// it first): text without a collation, or integers. It is a Catalyst aggregate
// (TypedImperativeAggregate, as Spark's collect_set and percentile are), not a
// user-defined one, so it reads each row's lists in place as LabelSets reads them (text
// compared by its bytes, as Spark compares it) where a user-defined aggregate gets each
// list converted into Java objects. Labels are counted over distinct non-NULL labels
// (DESIGN.md section 1). A row with a NULL list (or a NULL weight) adds no counts and marks
// the group as holding an unknown row. Memory grows with the distinct labels and distinct
// (tp, |A|, |P|) triples of a group, never with its rows; the counts are longs, so they add
// up alike in any order and on any partitioning.
//
// LabelCounts.coded(codes, actual, predicted): unweighted, over rows whose text labels come as
// the codes of LabelCodes (made in Spark's generated code, before Spark copies the lists into
// the rows it hands an aggregate), counted by code in an open-addressing table and turned
// into text through the task's interner before the buffer is written, merged or read; a row
// whose codes are NULL gives its lists, read as above.
//
// The result is one struct per group, `cells`: an array of (label, row_tp, row_n_actual,
// row_n_predicted, tp, fn, fp, row), the rows Spark SQL's GROUP BY of the spread gives: a
// label's row has its three counts (row 0) and NULL row statistics; a row-statistics row has
// a NULL label, zero label counts and `row` rows; a group with an unknown row has one row of
// NULL keys and zero counts.
package mlsql.spark;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInput;
import java.io.DataInputStream;
import java.io.DataOutput;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.aggregate.ImperativeAggregate;
import org.apache.spark.sql.catalyst.expressions.aggregate.TypedImperativeAggregate;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.sql.catalyst.util.GenericArrayData;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;
import scala.jdk.javaapi.CollectionConverters;

public final class LabelCounts extends TypedImperativeAggregate<LabelCounts.Counts>
    implements Serializable {
  private static final long serialVersionUID = 2L;

  /** Row statistics fit this many bits each to be packed in one long key (three in 63). */
  static final int BITS = 21;

  /**
   * A group's counts: per label (a {@link LabelSets.Text} or a Long) {tp, fn, fp}; per
   * row-statistics key (a packed {@link Stats} or a list of three Longs), {rows}.
   *
   * <p>Spark serializes the buffer after each partial aggregate: it writes itself compactly (a
   * tag and the bytes or the integer of each key, variable-length counts), since Java's default
   * form of the maps records every object it writes and ran a 2 GB heap out of memory on a group
   * of two million labels.
   */
  public static final class Counts {
    final HashMap<Object, long[]> labels = new HashMap<>();
    final HashMap<Object, long[]> rows = new HashMap<>();
    boolean unknown;
    /** Whether each count is a sum of weights ({@link #SUM} longs) rather than one long. */
    final boolean weighted;
    // Labels given as codes (LabelCodes) of the task `task`, whose interner is `interner`: an
    // open-addressing table, {tp, fn, fp} of code c at codeCounts[3·slot] where coded[slot]
    // == c + 1 (0: a free slot), codesHeld slots taken. Turned into `labels` (settle) before
    // the buffer is written, merged or read; never written itself.
    transient LabelCodes.Interner interner;
    transient long task;
    transient int[] coded;
    transient long[] codeCounts;
    transient int codesHeld;

    Counts(boolean weighted) {
      this.weighted = weighted;
    }

    /** The longs of one count: 1, or {@link #SUM} for a sum of weights. */
    int width() {
      return weighted ? SUM : 1;
    }

    /** The counts of code {@code code}: their offset in {@link #codeCounts}. */
    int codeSlot(int code) {
      if (coded == null) {
        coded = new int[64];
        codeCounts = new long[3 * 64];
      }
      int mask = coded.length - 1;
      int h = (int) ((code * LabelSets.K1) >>> 32) & mask;
      while (true) {
        int held = coded[h];
        if (held == code + 1) {
          return 3 * h;
        }
        if (held == 0) {
          if (2 * (codesHeld + 1) > coded.length) {
            grow();
            return codeSlot(code);
          }
          coded[h] = code + 1;
          codesHeld++;
          return 3 * h;
        }
        h = (h + 1) & mask;
      }
    }

    private void grow() {
      int[] oldCoded = coded;
      long[] oldCounts = codeCounts;
      coded = new int[2 * oldCoded.length];
      codeCounts = new long[3 * coded.length];
      codesHeld = 0;
      for (int h = 0; h < oldCoded.length; h++) {
        if (oldCoded[h] != 0) {
          int o = codeSlot(oldCoded[h] - 1);
          System.arraycopy(oldCounts, 3 * h, codeCounts, o, 3);
        }
      }
    }

    /** Moves the counts of coded labels into {@link #labels}, keyed by their text. */
    void settle() {
      if (coded == null) {
        return;
      }
      for (int h = 0; h < coded.length; h++) {
        if (coded[h] != 0) {
          long[] c = slot(labels, interner.text(coded[h] - 1), 3);
          for (int k = 0; k < 3; k++) {
            c[k] += codeCounts[3 * h + k];
          }
        }
      }
      coded = null;
      codeCounts = null;
      codesHeld = 0;
    }

    void write(DataOutput out) throws IOException {
      settle();
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

    static Counts read(DataInput in) throws IOException {
      Counts counts = new Counts(in.readBoolean());
      counts.unknown = in.readBoolean();
      int kinds = 3;
      for (HashMap<Object, long[]> map : List.of(counts.labels, counts.rows)) {
        for (int i = in.readInt(); i > 0; i--) {
          Object key = readKey(in);
          long[] c = new long[kinds * counts.width()];
          for (int j = 0; j < c.length; j++) {
            c[j] = counts.weighted ? in.readLong() : readCount(in);
          }
          map.put(key, c);
        }
        kinds = 1;
      }
      return counts;
    }
  }

  /**
   * A packed row-statistics key, tp + |A|·2^bits + |P|·2^(2·bits), hashed so that a
   * HashMap's low bits tell the triples apart (a Long's hash folds |P|'s bits onto the
   * others' and filled buckets into trees).
   */
  static final class Stats {
    final long packed;

    Stats(long packed) {
      this.packed = packed;
    }

    @Override
    public int hashCode() {
      long h = packed * LabelSets.K1;
      return (int) (h >>> 32);
    }

    @Override
    public boolean equals(Object other) {
      return other instanceof Stats && ((Stats) other).packed == packed;
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
  static void add(long[] c, int kind, long[] w) {
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
  static void addAll(long[] c, long[] d, int width) {
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

  // The kinds of key a buffer holds, as written: a text label, an integer label, a packed
  // row-statistics key and an unpacked one.
  private static final int TEXT = 0;
  private static final int INTEGER = 1;
  private static final int PACKED = 2;
  private static final int TRIPLE = 3;

  private static void writeKey(DataOutput out, Object key) throws IOException {
    if (key instanceof LabelSets.Text) {
      byte[] b = ((LabelSets.Text) key).bytes;
      out.writeByte(TEXT);
      out.writeInt(b.length);
      out.write(b);
    } else if (key instanceof Long) {
      out.writeByte(INTEGER);
      out.writeLong((Long) key);
    } else if (key instanceof Stats) {
      out.writeByte(PACKED);
      out.writeLong(((Stats) key).packed);
    } else if (key instanceof List) {
      out.writeByte(TRIPLE);
      for (Object x : (List<?>) key) {
        out.writeLong((Long) x);
      }
    } else {
      throw new IllegalStateException("mlsql: a buffer key of Java class " + key.getClass());
    }
  }

  private static Object readKey(DataInput in) throws IOException {
    int kind = in.readByte();
    switch (kind) {
      case TEXT:
        byte[] b = new byte[in.readInt()];
        in.readFully(b);
        return new LabelSets.Text(b);
      case INTEGER:
        return in.readLong();
      case PACKED:
        return new Stats(in.readLong());
      case TRIPLE:
        return List.of(in.readLong(), in.readLong(), in.readLong());
      default:
        throw new IllegalStateException("mlsql: a buffer key of kind " + kind);
    }
  }

  /** A count (never negative) in 7-bit groups, low first: one byte below 128. */
  private static void writeCount(DataOutput out, long c) throws IOException {
    while ((c & ~0x7FL) != 0) {
      out.writeByte((int) ((c & 0x7F) | 0x80));
      c >>>= 7;
    }
    out.writeByte((int) c);
  }

  private static long readCount(DataInput in) throws IOException {
    long c = 0;
    for (int shift = 0; ; shift += 7) {
      int b = in.readByte();
      c |= (long) (b & 0x7F) << shift;
      if ((b & 0x80) == 0) {
        return c;
      }
    }
  }

  private final Expression actual;
  private final Expression predicted;
  /** The rows' weights (a DOUBLE), or null: each count is then a count of rows. */
  private final Expression weight;
  /** A row's labels as codes (LabelCodes: NULL where the row gives its lists), or null. */
  private final Expression codes;
  private final scala.collection.immutable.Seq<Expression> children;

  /** The width of a packed row statistic: {@link #BITS}, fewer to test the unpacked keys. */
  private final int bits;

  /** Weights this large or larger are summed as DOUBLE (mlsql.spark.exact.BOUND). */
  private final double bound;

  private final int mutableAggBufferOffset;
  private final int inputAggBufferOffset;

  /** The reader of a row's lists, made once per task's copy of the aggregate. */
  private transient LabelSets sets;

  /**
   * The aggregate of the lists {@code actual} and {@code predicted} (of one type); with a
   * {@code weight} (a DOUBLE; null for none), each count is the sum of the rows' weights
   * (summed exactly below {@code bound}); row statistics are packed below {@code 2^bits}
   * (1 to {@link #BITS}).
   */
  public LabelCounts(
      Expression actual, Expression predicted, Expression weight, int bits, double bound) {
    this(actual, predicted, weight, null, bits, bound, 0, 0);
  }

  /**
   * The aggregate of rows whose labels come as {@code codes} (LabelCodes over text lists),
   * and as the lists {@code actual} and {@code predicted} where a row's codes are NULL;
   * unweighted.
   */
  public static LabelCounts coded(
      Expression codes, Expression actual, Expression predicted, int bits, double bound) {
    return new LabelCounts(actual, predicted, null, codes, bits, bound, 0, 0);
  }

  private LabelCounts(
      Expression actual,
      Expression predicted,
      Expression weight,
      Expression codes,
      int bits,
      double bound,
      int mutableAggBufferOffset,
      int inputAggBufferOffset) {
    if (bits < 1 || bits > BITS) {
      throw new IllegalArgumentException("mlsql: bits must be 1 to " + BITS + ", not " + bits);
    }
    this.actual = actual;
    this.predicted = predicted;
    this.weight = weight;
    this.codes = codes;
    if (codes != null && weight != null) {
      throw new IllegalArgumentException("mlsql: label codes are counted without weights");
    }
    this.bits = bits;
    this.bound = bound;
    this.mutableAggBufferOffset = mutableAggBufferOffset;
    this.inputAggBufferOffset = inputAggBufferOffset;
    List<Expression> given =
        weight != null
            ? List.of(actual, predicted, weight)
            : codes != null ? List.of(actual, predicted, codes) : List.of(actual, predicted);
    this.children = CollectionConverters.asScala(given).toList();
  }

  @Override
  public scala.collection.immutable.Seq<Expression> children() {
    return children;
  }

  @Override
  public Expression withNewChildrenInternal(scala.collection.immutable.IndexedSeq<Expression> c) {
    Expression w = weight != null ? c.apply(2) : null;
    Expression k = codes != null ? c.apply(2) : null;
    return new LabelCounts(
        c.apply(0), c.apply(1), w, k, bits, bound, mutableAggBufferOffset, inputAggBufferOffset);
  }

  @Override
  public int mutableAggBufferOffset() {
    return mutableAggBufferOffset;
  }

  @Override
  public int inputAggBufferOffset() {
    return inputAggBufferOffset;
  }

  @Override
  public ImperativeAggregate withNewMutableAggBufferOffset(int offset) {
    return new LabelCounts(
        actual, predicted, weight, codes, bits, bound, offset, inputAggBufferOffset);
  }

  @Override
  public ImperativeAggregate withNewInputAggBufferOffset(int offset) {
    return new LabelCounts(
        actual, predicted, weight, codes, bits, bound, mutableAggBufferOffset, offset);
  }

  @Override
  public boolean nullable() {
    return false;
  }

  @Override
  public String prettyName() {
    return "mlsql_label_counts";
  }

  /** The lists' label type. */
  private DataType labelType() {
    return ((ArrayType) actual.dataType()).elementType();
  }

  @Override
  public DataType dataType() {
    DataType count = weight != null ? DataTypes.DoubleType : DataTypes.LongType;
    StructType cell =
        new StructType(
            new StructField[] {
              DataTypes.createStructField("label", labelType(), true),
              DataTypes.createStructField("row_tp", DataTypes.LongType, true),
              DataTypes.createStructField("row_n_actual", DataTypes.LongType, true),
              DataTypes.createStructField("row_n_predicted", DataTypes.LongType, true),
              DataTypes.createStructField("tp", count, false),
              DataTypes.createStructField("fn", count, false),
              DataTypes.createStructField("fp", count, false),
              DataTypes.createStructField("row", count, false),
            });
    return new StructType(
        new StructField[] {
          DataTypes.createStructField("cells", DataTypes.createArrayType(cell, false), false),
        });
  }

  @Override
  public Counts createAggregationBuffer() {
    return new Counts(weight != null);
  }

  @Override
  public Counts update(Counts counts, InternalRow input) {
    if (codes != null) {
      Object coded = codes.eval(input);
      if (coded != null) {
        return updateCodes(counts, (ArrayData) coded);
      }
    }
    Object a = actual.eval(input);
    Object p = a == null ? null : predicted.eval(input);
    Object w = p == null || weight == null ? null : weight.eval(input);
    if (p == null || (weight != null && w == null)) {
      counts.unknown = true;
      return counts;
    }
    if (sets == null) {
      sets =
          new LabelSets(
              LabelSets.kind(actual.dataType()), LabelSets.kind(predicted.dataType()), false);
    }
    LabelSets s = sets;
    if (!s.read((ArrayData) a, (ArrayData) p)) {
      throw new IllegalStateException(
          "mlsql: label_counts reads lists of text without a collation or of integers, not "
              + actual.dataType().simpleString());
    }
    long[] parts = w == null ? null : parts((Double) w, bound);
    int width = counts.width();
    for (int i = 0; i < s.na; i++) {
      add(label(counts, s, i, 3 * width), s.shared[i] ? 0 : 1, parts);
    }
    for (int j = s.at; j < s.at + s.np; j++) {
      if (!s.shared[j]) {
        add(label(counts, s, j, 3 * width), 2, parts);
      }
    }
    long limit = 1L << bits;
    Object key =
        s.na < limit && s.np < limit
            ? (Object) new Stats(s.tp + ((long) s.na << bits) + ((long) s.np << (2 * bits)))
            : List.of(s.tp, (long) s.na, (long) s.np);
    add(slot(counts.rows, key, width), 0, parts);
    return counts;
  }

  /** Counts one row given as its labels' codes (see LabelCodes). */
  private Counts updateCodes(Counts counts, ArrayData coded) {
    long task = (coded.getInt(0) & 0xFFFFFFFFL) | ((long) coded.getInt(1) << 32);
    if (counts.interner == null) {
      counts.interner = LabelCodes.Interner.ofTask(task);
      counts.task = task;
    }
    if (counts.interner == null || counts.task != task) {
      throw new IllegalStateException(
          "mlsql: label codes of task " + task + " reached an aggregate outside that task");
    }
    int tp = coded.getInt(2);
    int na = coded.getInt(3);
    int np = coded.getInt(4);
    int n = coded.numElements();
    for (int k = LabelCodes.HEAD; k < n; k++) {
      int element = coded.getInt(k);
      int o = counts.codeSlot(element >>> 2);
      counts.codeCounts[o + (element & 3)]++;
    }
    long limit = 1L << bits;
    Object key =
        na < limit && np < limit
            ? (Object) new Stats(tp + ((long) na << bits) + ((long) np << (2 * bits)))
            : List.of((long) tp, (long) na, (long) np);
    add(slot(counts.rows, key, 1), 0, null);
    return counts;
  }

  /**
   * The counts of {@code s}'s label {@code i}, looked up by its probe; a new label is stored
   * as a {@link LabelSets.Text} of its own bytes, or a Long.
   */
  private static long[] label(Counts counts, LabelSets s, int i, int size) {
    long[] c = counts.labels.get(s.probe(i));
    if (c == null) {
      c = new long[size];
      counts.labels.put(s.text() ? s.copy(i) : (Object) s.numbers[i], c);
    }
    return c;
  }

  @Override
  public Counts merge(Counts into, Counts from) {
    into.settle();
    from.settle();
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
  public Object eval(Counts counts) {
    counts.settle();
    boolean weighted = counts.weighted;
    Object zero = weighted ? (Object) 0.0 : (Object) 0L;
    DataType type = labelType();
    List<Object> cells = new ArrayList<>(counts.labels.size() + counts.rows.size() + 1);
    for (Map.Entry<Object, long[]> e : counts.labels.entrySet()) {
      Object label = e.getKey();
      if (label instanceof LabelSets.Text) {
        label = UTF8String.fromBytes(((LabelSets.Text) label).bytes);
      } else if (label instanceof Long) {
        long x = (Long) label;
        if (type instanceof IntegerType) {
          label = (int) x;
        } else if (type instanceof ShortType) {
          label = (short) x;
        } else if (type instanceof ByteType) {
          label = (byte) x;
        }
      }
      long[] c = e.getValue();
      cells.add(cell(label, null, null, null, count(c, 0, weighted), count(c, 1, weighted), count(c, 2, weighted), zero));
    }
    for (Map.Entry<Object, long[]> e : counts.rows.entrySet()) {
      long tp;
      long na;
      long np;
      if (e.getKey() instanceof Stats) {
        long packed = ((Stats) e.getKey()).packed;
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
      cells.add(cell(null, tp, na, np, zero, zero, zero, count(e.getValue(), 0, weighted)));
    }
    if (counts.unknown) {
      cells.add(cell(null, null, null, null, zero, zero, zero, zero));
    }
    return new GenericInternalRow(new Object[] {new GenericArrayData(cells.toArray())});
  }

  private static InternalRow cell(Object... values) {
    return new GenericInternalRow(values);
  }

  /** Count {@code kind} of {@code c}: a long, or the DOUBLE a sum of weights comes to. */
  private static Object count(long[] c, int kind, boolean weighted) {
    return weighted ? (Object) total(c, kind * SUM) : (Object) c[kind];
  }

  @Override
  public byte[] serialize(Counts counts) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      counts.write(out);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return bytes.toByteArray();
  }

  @Override
  public Counts deserialize(byte[] stored) {
    try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(stored))) {
      return Counts.read(in);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public int productArity() {
    return 6;
  }

  @Override
  public Object productElement(int n) {
    switch (n) {
      case 0:
        return actual;
      case 1:
        return predicted;
      case 2:
        return weight;
      case 3:
        return codes;
      case 4:
        return bits;
      default:
        return bound;
    }
  }

  @Override
  public boolean canEqual(Object other) {
    return other instanceof LabelCounts;
  }

  // equal children and settings, equal aggregates: Spark then computes one of them
  @Override
  public boolean equals(Object other) {
    if (!(other instanceof LabelCounts)) {
      return false;
    }
    LabelCounts o = (LabelCounts) other;
    return o.children.equals(children)
        && o.bits == bits
        && o.bound == bound
        && o.mutableAggBufferOffset == mutableAggBufferOffset
        && o.inputAggBufferOffset == inputAggBufferOffset;
  }

  @Override
  public int hashCode() {
    return children.hashCode() * 31 + bits * 7 + mutableAggBufferOffset * 3 + inputAggBufferOffset;
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
