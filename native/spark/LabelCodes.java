// mlsql's Catalyst expression that hands a row's text labels to the per-label aggregate
// (LabelCounts) as numbers: each distinct label's code in its task, with whether it is a true
// positive, a false negative or a false positive, and the row's (|A ∩ P|, |A|, |P|).
//
// Why: Spark gives an aggregate it does not generate code for (LabelCounts, as every
// TypedImperativeAggregate) rows, and builds them in its generated code from the scan's
// column vectors by copying each list's text into the row; the aggregate then hashes and
// compares the text again. This expression runs inside that generated code, before the
// copy, where it reads the lists as LabelSets reads them (dictionary-encoded Parquet text
// by number: one lookup a label); the aggregate's input is then a short list of integers.
//
// LabelCodes(actual, predicted) over two lists of text without a collation: an ARRAY<INT>
//   [task id (low 32 bits), task id (high 32 bits), tp, |A|, |P|, code·4 + kind, ...]
// with one element per distinct label: kind 0 a true positive (in both lists), 1 a false
// negative (actual only), 2 a false positive (predicted only). NULL where either list is
// NULL, outside a task (Spark evaluating a plan's constants in the driver), or where a
// task's codes run past 2^29: the caller then hands the aggregate the lists themselves.
//
// A code is the label's number in its task's Interner (one per task attempt, dropped when the
// task completes). The aggregate's partial buffer is filled in the same task as the
// expression runs (Spark's partial aggregate reads its child's rows in the task that makes
// them), holds the interner, and turns codes back into text before Spark serializes it or
// reads its result; it checks the task id, so codes are never read against another task's
// interner.
package mlsql.spark;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiFunction;

import org.apache.spark.TaskContext;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.UnsafeArrayData;
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenContext;
import org.apache.spark.sql.catalyst.expressions.codegen.ExprCode;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.sql.classic.ExpressionUtils;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;

public final class LabelCodes extends ListsExpression {
  private static final long serialVersionUID = 1L;

  /** Elements before the labels: the task id's two halves, tp, |A| and |P|. */
  static final int HEAD = 5;
  /** Codes stay below this, so that code·4 + kind fits an INT. */
  static final int LIMIT = 1 << 29;

  // a label's kind, the low two bits of its element
  static final int TP = 0;
  static final int FN = 1;
  static final int FP = 2;

  /**
   * Each group's per-label counts of {@code rows} (the columns {@code groups} and the text
   * lists {@code __a} and {@code __p}), unweighted, as the column {@code __cells} of the
   * rows grouped by {@code groups}: the lists' codes made in a projection, the lists kept
   * only where a row has none, and {@link LabelCounts#coded} over both. Built here so that
   * Python makes it in one call (mlsql.spark.jvm.label_counts).
   */
  public static Dataset<Row> counted(
      Dataset<Row> rows, String[] groups, int bits, double bound) {
    Column codes = functions.col("__c");
    Dataset<Row> coded =
        rows.withColumn("__c", column(new LabelCodes(expression("__a"), expression("__p"))))
            .withColumn("__a", functions.when(codes.isNull(), functions.col("__a")))
            .withColumn("__p", functions.when(codes.isNull(), functions.col("__p")));
    LabelCounts counts =
        LabelCounts.coded(
            expression("__c"), expression("__a"), expression("__p"), bits, bound);
    Column[] keys = new Column[groups.length];
    for (int g = 0; g < groups.length; g++) {
      keys[g] = functions.col("`" + groups[g].replace("`", "``") + "`");
    }
    return coded.groupBy(keys).agg(column(counts.toAggregateExpression()).alias("__cells"));
  }

  private static Expression expression(String name) {
    return ExpressionUtils.expression(functions.col(name));
  }

  private static Column column(Expression e) {
    return ExpressionUtils.column(e);
  }

  public LabelCodes(Expression actual, Expression predicted) {
    super(actual, predicted);
  }

  @Override
  public Expression withNewChildrenInternal(scala.collection.immutable.IndexedSeq<Expression> c) {
    return new LabelCodes(c.apply(0), c.apply(1));
  }

  @Override
  public DataType dataType() {
    return DataTypes.createArrayType(DataTypes.IntegerType, false);
  }

  @Override
  public String prettyName() {
    return "mlsql_label_codes";
  }

  /** The coder {@link #eval} uses, made once per task's copy of the expression. */
  private transient Coder evaluator;

  @Override
  Object evaluate(ArrayData a, ArrayData p) {
    if (evaluator == null) {
      evaluator = new Coder(actualKind(), predictedKind());
    }
    return evaluator.apply(a, p);
  }

  @Override
  public ExprCode doGenCode(CodegenContext ctx, ExprCode ev) {
    String type = ArrayData.class.getName();
    Coder coder = new Coder(actualKind(), predictedKind());
    return called(
        ctx, ev, coder, BiFunction.class, "apply", type, "null", "(" + type + ") ", "VALUE == null");
  }

  /** A row's codes ({@link LabelCodes}), or null where the row is handed over as lists. */
  static final class Coder implements BiFunction<ArrayData, ArrayData, ArrayData>, Serializable {
    private static final long serialVersionUID = 1L;

    private final LabelSets sets;
    private transient Interner interner;
    private transient long task;

    Coder(int actualKind, int predictedKind) {
      this.sets = new LabelSets(actualKind, predictedKind, true);
    }

    @Override
    public ArrayData apply(ArrayData a, ArrayData p) {
      TaskContext context = TaskContext.get();
      if (context == null || !sets.text()) {
        return null;
      }
      long id = context.taskAttemptId();
      if (interner == null || id != task) {
        interner = Interner.of(context);
        task = id;
      }
      LabelSets s = sets;
      s.interner = interner;
      if (!s.read(a, p)) {
        return null;
      }
      int[] out = new int[HEAD + s.na + s.np - (int) s.tp];
      out[0] = (int) id;
      out[1] = (int) (id >>> 32);
      out[2] = (int) s.tp;
      out[3] = s.na;
      out[4] = s.np;
      int k = HEAD;
      for (int i = 0; i < s.na; i++) {
        long code = s.code(i);
        if (code >= LIMIT) {
          return null;
        }
        out[k++] = ((int) code << 2) | (s.shared[i] ? TP : FN);
      }
      for (int j = s.at; j < s.at + s.np; j++) {
        if (!s.shared[j]) {
          long code = s.code(j);
          if (code >= LIMIT) {
            return null;
          }
          out[k++] = ((int) code << 2) | FP;
        }
      }
      return UnsafeArrayData.fromPrimitiveArray(out);
    }
  }

  /**
   * A task's text labels, numbered in the order they are met: the same bytes, the same code.
   * One per task attempt ({@link #of}), used by one thread.
   */
  static final class Interner {
    private static final ConcurrentHashMap<Long, Interner> TASKS = new ConcurrentHashMap<>();

    final HashMap<Object, Integer> codes = new HashMap<>();
    final List<LabelSets.Text> texts = new ArrayList<>();

    /** The interner of {@code context}'s task, made at its first call and dropped at its end. */
    static Interner of(TaskContext context) {
      long id = context.taskAttemptId();
      Interner known = TASKS.get(id);
      if (known != null) {
        return known;
      }
      Interner made = new Interner();
      TASKS.put(id, made);
      context.addTaskCompletionListener(
          (org.apache.spark.util.TaskCompletionListener) done -> TASKS.remove(id));
      return made;
    }

    /** The interner of the running task {@code id}, else null. */
    static Interner ofTask(long id) {
      return TASKS.get(id);
    }

    /** The code of {@code label} (a {@link LabelSets.Text}), numbered anew if it is new. */
    int code(LabelSets.Text label) {
      Integer known = codes.get(label);
      if (known != null) {
        return known;
      }
      int next = texts.size();
      codes.put(label, next);
      texts.add(label);
      return next;
    }

    /** The code of {@code s}'s text label {@code i} (read by its bytes), numbered anew if new. */
    int code(LabelSets s, int i) {
      Integer known = codes.get(s.probe(i));
      return known != null ? known : code(s.copy(i));
    }

    /** The label of {@code code}. */
    LabelSets.Text text(int code) {
      return texts.get(code);
    }
  }
}
