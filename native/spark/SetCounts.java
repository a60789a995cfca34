// mlsql's Catalyst expression for Spark: a row's label-set statistics in one call.
//
// Built by native/build_spark.py (the package's build hook) with the JDK against PySpark's
// own jars into mlsql/_native/mlsql_spark.jar; mlsql.spark.jvm adds the jar to a classic
// session and wraps the expression in a Column where it builds a row's statistics
// (mlsql.spark.stats). Without it, Spark SQL's array functions give the same numbers.
//
// SetCounts(actual, predicted): NULL where either list is NULL, else tp = |A ∩ P|,
// n_actual = |A| and n_predicted = |P| over distinct non-NULL labels (DESIGN.md section 1),
// packed in one long as tp + n_actual * 2^21 + n_predicted * 2^42, so that a formula's
// three sums are sums of bit fields of one column. A row with 2^21 or more distinct labels
// on a side gives NULL too, as do lists of another element type (text under a collation
// whose equality is not the bytes', or anything but text and integers): the caller
// computes every NULL row with Spark SQL (for a NULL list, a NULL at once).
//
// An expression rather than a user-defined function: Spark hands a function each list
// converted to a Scala Seq of Java objects (a String decoded per label), where an
// expression reads its ArrayData in place, and its generated code stays inside Spark's
// whole-stage code (no CodegenFallback, which measured slower than the conversion it
// saves). Text is compared by its bytes, as Spark compares text without a collation;
// integers by value whatever their width. Lists of up to 32 labels are compared pairwise
// (hash first) in scratch arrays; longer ones through hash sets.
//
// It is written in Java against Catalyst's Expression directly (javac cannot extend
// BinaryExpression, whose final Scala bridge it does not see as an override), and its
// generated code calls the counter through a JDK interface among the query's references,
// so that the generated class never names a class of this jar (Janino compiles it with
// whatever class loader the compiling thread has).
package mlsql.spark;

import java.io.Serializable;
import java.util.HashSet;
import java.util.List;
import java.util.function.ToLongBiFunction;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.codegen.CodeBlock;
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenContext;
import org.apache.spark.sql.catalyst.expressions.codegen.ExprCode;
import org.apache.spark.sql.catalyst.expressions.codegen.JavaCode;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.unsafe.types.UTF8String;
import scala.jdk.javaapi.CollectionConverters;

public final class SetCounts extends Expression implements Serializable {
  private static final long serialVersionUID = 1L;

  /** A count this large or larger does not fit its 21 bits: the row gives NULL. */
  static final long LIMIT = 1L << 21;

  /** Lists up to this long are compared pairwise. */
  static final int SHORT = 32;

  // each side's element kind: how its labels are read
  static final int NONE = -1;
  static final int TEXT = 0;
  static final int LONG = 1;
  static final int INT = 2;
  static final int SHORT_INT = 3;
  static final int BYTE = 4;

  private final Expression actual;
  private final Expression predicted;
  private final scala.collection.immutable.Seq<Expression> children;

  public SetCounts(Expression actual, Expression predicted) {
    this.actual = actual;
    this.predicted = predicted;
    this.children = CollectionConverters.asScala(List.of(actual, predicted)).toList();
  }

  @Override
  public scala.collection.immutable.Seq<Expression> children() {
    return children;
  }

  @Override
  public Expression withNewChildrenInternal(scala.collection.immutable.IndexedSeq<Expression> c) {
    return new SetCounts(c.apply(0), c.apply(1));
  }

  @Override
  public DataType dataType() {
    return DataTypes.LongType;
  }

  @Override
  public boolean nullable() {
    return true;
  }

  @Override
  public String prettyName() {
    return "mlsql_set_counts";
  }

  private Counter counter() {
    return new Counter(kind(actual.dataType()), kind(predicted.dataType()));
  }

  @Override
  public Object eval(InternalRow row) {
    Object a = actual.eval(row);
    if (a == null) {
      return null;
    }
    Object p = predicted.eval(row);
    if (p == null) {
      return null;
    }
    long packed = counter().applyAsLong((ArrayData) a, (ArrayData) p);
    return packed < 0 ? null : packed;
  }

  @Override
  public ExprCode doGenCode(CodegenContext ctx, ExprCode ev) {
    ExprCode a = actual.genCode(ctx);
    ExprCode p = predicted.genCode(ctx);
    String counter =
        ctx.addReferenceObj("mlsqlSetCounts", counter(), ToLongBiFunction.class.getName());
    String code =
        a.code()
            + "\n"
            + p.code()
            + "\nboolean "
            + ev.isNull()
            + " = true;\nlong "
            + ev.value()
            + " = -1L;\nif (!"
            + a.isNull()
            + " && !"
            + p.isNull()
            + ") {\n  "
            + ev.value()
            + " = "
            + counter
            + ".applyAsLong("
            + a.value()
            + ", "
            + p.value()
            + ");\n  "
            + ev.isNull()
            + " = "
            + ev.value()
            + " < 0L;\n}\n";
    CodeBlock block =
        new CodeBlock(
            CollectionConverters.asScala(List.of(code)).toList(),
            CollectionConverters.asScala(List.<JavaCode>of()).toList());
    return ev.copy(block, ev.isNull(), ev.value());
  }

  @Override
  public int productArity() {
    return 2;
  }

  @Override
  public Object productElement(int n) {
    return n == 0 ? actual : predicted;
  }

  @Override
  public boolean canEqual(Object other) {
    return other instanceof SetCounts;
  }

  // equal children, equal expressions: Spark's common subexpressions then call it once a row
  @Override
  public boolean equals(Object other) {
    return other instanceof SetCounts
        && ((SetCounts) other).actual.equals(actual)
        && ((SetCounts) other).predicted.equals(predicted);
  }

  @Override
  public int hashCode() {
    return 31 * actual.hashCode() + predicted.hashCode() + 0x5e7c;
  }

  /** How a list type's labels are read: TEXT, an integer width, or NONE (left to Spark SQL). */
  static int kind(DataType type) {
    if (!(type instanceof ArrayType)) {
      return NONE;
    }
    DataType e = ((ArrayType) type).elementType();
    if (e instanceof StringType) {
      return ((StringType) e).supportsBinaryEquality() ? TEXT : NONE;
    }
    if (e instanceof LongType) {
      return LONG;
    }
    if (e instanceof IntegerType) {
      return INT;
    }
    if (e instanceof ShortType) {
      return SHORT_INT;
    }
    return e instanceof ByteType ? BYTE : NONE;
  }

  /** The packed counts of a row's two lists, or -1 where the row is left to Spark SQL. */
  static final class Counter implements ToLongBiFunction<ArrayData, ArrayData>, Serializable {
    private static final long serialVersionUID = 1L;

    private final int actualKind;
    private final int predictedKind;
    // scratch for short lists, made once per task's copy of the counter
    private transient UTF8String[] texts;
    private transient long[] numbers;
    private transient int[] hashes;

    Counter(int actualKind, int predictedKind) {
      this.actualKind = actualKind;
      this.predictedKind = predictedKind;
    }

    @Override
    public long applyAsLong(ArrayData a, ArrayData p) {
      if (actualKind == NONE || predictedKind == NONE) {
        return -1;
      }
      if ((actualKind == TEXT) != (predictedKind == TEXT)) {
        return -1;
      }
      if (a.numElements() > SHORT || p.numElements() > SHORT) {
        return actualKind == TEXT ? textSets(a, p) : numberSets(a, p);
      }
      if (hashes == null) {
        texts = new UTF8String[2 * SHORT];
        numbers = new long[2 * SHORT];
        hashes = new int[2 * SHORT];
      }
      return actualKind == TEXT ? texts(a, p) : numbers(a, p);
    }

    private static long packed(long tp, long na, long np) {
      if (na >= LIMIT || np >= LIMIT) {
        return -1;
      }
      return tp + (na << 21) + (np << 42);
    }

    /** The distinct non-NULL texts of {@code d} into the scratch from {@code at}: how many. */
    private int distinctTexts(ArrayData d, int at) {
      int k = 0;
      for (int i = 0; i < d.numElements(); i++) {
        if (d.isNullAt(i)) {
          continue;
        }
        UTF8String s = d.getUTF8String(i);
        int h = s.hashCode();
        boolean seen = false;
        for (int j = at; j < at + k && !seen; j++) {
          seen = hashes[j] == h && texts[j].equals(s);
        }
        if (!seen) {
          texts[at + k] = s;
          hashes[at + k] = h;
          k++;
        }
      }
      return k;
    }

    private long texts(ArrayData a, ArrayData p) {
      int na = distinctTexts(a, 0);
      int np = distinctTexts(p, SHORT);
      long tp = 0;
      for (int i = 0; i < na; i++) {
        for (int j = SHORT; j < SHORT + np; j++) {
          if (hashes[i] == hashes[j] && texts[i].equals(texts[j])) {
            tp++;
            break;
          }
        }
      }
      return packed(tp, na, np);
    }

    private static long number(ArrayData d, int kind, int i) {
      switch (kind) {
        case LONG:
          return d.getLong(i);
        case INT:
          return d.getInt(i);
        case SHORT_INT:
          return d.getShort(i);
        default:
          return d.getByte(i);
      }
    }

    /** The distinct non-NULL integers of {@code d} into the scratch from {@code at}. */
    private int distinctNumbers(ArrayData d, int kind, int at) {
      int k = 0;
      for (int i = 0; i < d.numElements(); i++) {
        if (d.isNullAt(i)) {
          continue;
        }
        long x = number(d, kind, i);
        boolean seen = false;
        for (int j = at; j < at + k && !seen; j++) {
          seen = numbers[j] == x;
        }
        if (!seen) {
          numbers[at + k] = x;
          k++;
        }
      }
      return k;
    }

    private long numbers(ArrayData a, ArrayData p) {
      int na = distinctNumbers(a, actualKind, 0);
      int np = distinctNumbers(p, predictedKind, SHORT);
      long tp = 0;
      for (int i = 0; i < na; i++) {
        for (int j = SHORT; j < SHORT + np; j++) {
          if (numbers[i] == numbers[j]) {
            tp++;
            break;
          }
        }
      }
      return packed(tp, na, np);
    }

    private static long textSets(ArrayData a, ArrayData p) {
      HashSet<UTF8String> sa = new HashSet<>();
      for (int i = 0; i < a.numElements(); i++) {
        if (!a.isNullAt(i)) {
          sa.add(a.getUTF8String(i));
        }
      }
      HashSet<UTF8String> sp = new HashSet<>();
      long tp = 0;
      for (int j = 0; j < p.numElements(); j++) {
        if (!p.isNullAt(j)) {
          UTF8String y = p.getUTF8String(j);
          if (sp.add(y) && sa.contains(y)) {
            tp++;
          }
        }
      }
      return packed(tp, sa.size(), sp.size());
    }

    private long numberSets(ArrayData a, ArrayData p) {
      HashSet<Long> sa = new HashSet<>();
      for (int i = 0; i < a.numElements(); i++) {
        if (!a.isNullAt(i)) {
          sa.add(number(a, actualKind, i));
        }
      }
      HashSet<Long> sp = new HashSet<>();
      long tp = 0;
      for (int j = 0; j < p.numElements(); j++) {
        if (!p.isNullAt(j)) {
          long y = number(p, predictedKind, j);
          if (sp.add(y) && sa.contains(y)) {
            tp++;
          }
        }
      }
      return packed(tp, sa.size(), sp.size());
    }
  }
}
