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
// saves). The lists are read as LabelSets reads them (text compared by its bytes, as Spark
// compares text without a collation; integers by value whatever their width).
//
// It is written in Java against Catalyst's Expression directly (javac cannot extend
// BinaryExpression, whose final Scala bridge it does not see as an override), and its
// generated code calls the counter through a JDK interface among the query's references,
// so that the generated class never names a class of this jar (Janino compiles it with
// whatever class loader the compiling thread has).
package mlsql.spark;

import java.io.Serializable;
import java.util.List;
import java.util.function.ToLongBiFunction;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.codegen.CodeBlock;
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenContext;
import org.apache.spark.sql.catalyst.expressions.codegen.ExprCode;
import org.apache.spark.sql.catalyst.expressions.codegen.JavaCode;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import scala.jdk.javaapi.CollectionConverters;

public final class SetCounts extends Expression implements Serializable {
  private static final long serialVersionUID = 1L;

  /** A count this large or larger does not fit its 21 bits: the row gives NULL. */
  static final long LIMIT = 1L << 21;

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

  /**
   * Whether this Spark's vectorized Parquet reader hands its dictionary-encoded text over in
   * a form the counter reads by number (see LabelSets); where not, text is compared by its
   * bytes, with the same counts.
   */
  public static boolean readsDictionaries() {
    return LabelSets.readsDictionaries();
  }

  private Counter counter() {
    return new Counter(LabelSets.kind(actual.dataType()), LabelSets.kind(predicted.dataType()));
  }

  /** The counter {@link #eval} uses, made once per task's copy of the expression. */
  private transient Counter evaluator;

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
    if (evaluator == null) {
      evaluator = counter();
    }
    long packed = evaluator.applyAsLong((ArrayData) a, (ArrayData) p);
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

  /** The packed counts of a row's two lists, or -1 where the row is left to Spark SQL. */
  static final class Counter implements ToLongBiFunction<ArrayData, ArrayData>, Serializable {
    private static final long serialVersionUID = 2L;

    private final LabelSets sets;

    Counter(int actualKind, int predictedKind) {
      this.sets = new LabelSets(actualKind, predictedKind, true);
    }

    @Override
    public long applyAsLong(ArrayData a, ArrayData p) {
      if (!sets.read(a, p) || sets.na >= LIMIT || sets.np >= LIMIT) {
        return -1;
      }
      return sets.tp + ((long) sets.na << 21) + ((long) sets.np << 42);
    }
  }
}
