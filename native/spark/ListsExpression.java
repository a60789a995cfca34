// The Catalyst expression form of mlsql's two expressions over a row's label lists
// (SetCounts, LabelCodes): two children, NULL where either is NULL, and generated code that
// calls a function object of this jar among the query's references.
//
// It is written in Java against Catalyst's Expression directly (javac cannot extend
// BinaryExpression, whose final Scala bridge it does not see as an override), and its
// generated code calls the function through a JDK interface, so that the generated class
// never names a class of this jar (Janino compiles it with whatever class loader the
// compiling thread has).
package mlsql.spark;

import java.io.Serializable;
import java.util.List;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.codegen.CodeBlock;
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenContext;
import org.apache.spark.sql.catalyst.expressions.codegen.ExprCode;
import org.apache.spark.sql.catalyst.expressions.codegen.JavaCode;
import org.apache.spark.sql.catalyst.util.ArrayData;
import scala.jdk.javaapi.CollectionConverters;

abstract class ListsExpression extends Expression implements Serializable {
  private static final long serialVersionUID = 1L;

  final Expression actual;
  final Expression predicted;
  private final scala.collection.immutable.Seq<Expression> children;

  ListsExpression(Expression actual, Expression predicted) {
    this.actual = actual;
    this.predicted = predicted;
    this.children = CollectionConverters.asScala(List.of(actual, predicted)).toList();
  }

  /** How the actual list's labels are read (LabelSets.kind). */
  int actualKind() {
    return LabelSets.kind(actual.dataType());
  }

  /** How the predicted list's labels are read (LabelSets.kind). */
  int predictedKind() {
    return LabelSets.kind(predicted.dataType());
  }

  /** The value of two non-NULL lists (null for NULL), as {@link #eval} gives it. */
  abstract Object evaluate(ArrayData a, ArrayData p);

  @Override
  public Object eval(InternalRow row) {
    Object a = actual.eval(row);
    Object p = a == null ? null : predicted.eval(row);
    return p == null ? null : evaluate((ArrayData) a, (ArrayData) p);
  }

  /**
   * Generated code: both children, then where neither is NULL {@code value = cast
   * function.method(a, p)}, NULL where {@code nullWhen} holds of the value; {@code function}
   * is added to the query's references as a {@code type} (a JDK interface), and the value is
   * a {@code javaType} that starts as {@code initial}.
   */
  ExprCode called(
      CodegenContext ctx,
      ExprCode ev,
      Object function,
      Class<?> type,
      String method,
      String javaType,
      String initial,
      String cast,
      String nullWhen) {
    ExprCode a = actual.genCode(ctx);
    ExprCode p = predicted.genCode(ctx);
    String f = ctx.addReferenceObj("mlsql" + getClass().getSimpleName(), function, type.getName());
    String v = ev.value().toString();
    String code =
        String.join(
            "\n",
            a.code().toString(),
            p.code().toString(),
            "boolean " + ev.isNull() + " = true;",
            javaType + " " + v + " = " + initial + ";",
            "if (!" + a.isNull() + " && !" + p.isNull() + ") {",
            "  " + v + " = " + cast + f + "." + method + "(" + a.value() + ", " + p.value() + ");",
            "  " + ev.isNull() + " = " + nullWhen.replace("VALUE", v) + ";",
            "}",
            "");
    CodeBlock block =
        new CodeBlock(
            CollectionConverters.asScala(List.of(code)).toList(),
            CollectionConverters.asScala(List.<JavaCode>of()).toList());
    return ev.copy(block, ev.isNull(), ev.value());
  }

  @Override
  public scala.collection.immutable.Seq<Expression> children() {
    return children;
  }

  @Override
  public boolean nullable() {
    return true;
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
    return other != null && other.getClass() == getClass();
  }

  // equal children, equal expressions: Spark's common subexpressions then call it once a row
  @Override
  public boolean equals(Object other) {
    return canEqual(other)
        && ((ListsExpression) other).actual.equals(actual)
        && ((ListsExpression) other).predicted.equals(predicted);
  }

  @Override
  public int hashCode() {
    return 31 * actual.hashCode() + predicted.hashCode() + getClass().getName().hashCode();
  }
}
