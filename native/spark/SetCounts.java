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
// (Its Catalyst form, shared with LabelCodes: ListsExpression.)
package mlsql.spark;

import java.io.Serializable;
import java.util.function.ToLongBiFunction;

import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenContext;
import org.apache.spark.sql.catalyst.expressions.codegen.ExprCode;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;

public final class SetCounts extends ListsExpression {
  private static final long serialVersionUID = 2L;

  /** A count this large or larger does not fit its 21 bits: the row gives NULL. */
  static final long LIMIT = 1L << 21;

  public SetCounts(Expression actual, Expression predicted) {
    super(actual, predicted);
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

  /** The counter {@link #eval} uses, made once per task's copy of the expression. */
  private transient Counter evaluator;

  @Override
  Object evaluate(ArrayData a, ArrayData p) {
    if (evaluator == null) {
      evaluator = new Counter(actualKind(), predictedKind());
    }
    long packed = evaluator.applyAsLong(a, p);
    return packed < 0 ? null : packed;
  }

  @Override
  public ExprCode doGenCode(CodegenContext ctx, ExprCode ev) {
    Counter counter = new Counter(actualKind(), predictedKind());
    return called(
        ctx, ev, counter, ToLongBiFunction.class, "applyAsLong", "long", "-1L", "", "VALUE < 0L");
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
