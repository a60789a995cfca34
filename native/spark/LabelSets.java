// One row's two label lists read in place, for mlsql's Spark expression (SetCounts) and its
// per-label aggregate (LabelCounts): each side's distinct non-NULL labels (DESIGN.md section
// 1) and which of them the other side holds too.
//
// Lists come as Spark's ArrayData, never converted: text is compared by its bytes, as Spark
// compares text without a collation, read where it lies in an UnsafeArrayData (Spark's rows)
// and through a UTF8String in other arrays; integers by value whatever their width. Lists of
// up to 32 labels are compared pairwise in scratch arrays (text by hash first); longer ones
// through hash maps. The scratch is made once per task's copy of the reader, so one reader
// serves one thread.
//
// A reader that only counts (SetCounts) compares dictionary-encoded text by number: where
// Spark's vectorized Parquet reader left both lists' text as ids into their column chunks'
// dictionaries (a ColumnarArray over a column vector with a dictionary), each dictionary
// entry is numbered once per pair of dictionaries (DictionaryNumbers: the same bytes, the
// same number, whichever side), and a row's labels are read as those numbers and compared
// as integer labels are. Reaching the vector and the dictionaries takes private fields of
// Spark's, read through VarHandles; where a Spark version lacks them, text is read by its
// bytes, as from any array.
package mlsql.spark;

import java.io.Serializable;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.HashMap;

import org.apache.spark.sql.catalyst.expressions.UnsafeArrayData;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.sql.execution.datasources.parquet.ParquetDictionary;
import org.apache.spark.sql.execution.vectorized.Dictionary;
import org.apache.spark.sql.execution.vectorized.WritableColumnVector;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarArray;
import org.apache.spark.unsafe.Platform;
import org.apache.spark.unsafe.array.ByteArrayMethods;
import org.apache.spark.unsafe.types.UTF8String;

final class LabelSets implements Serializable {
  private static final long serialVersionUID = 1L;

  /** Lists up to this long are compared pairwise. */
  static final int SHORT = 32;

  // each side's element kind: how its labels are read
  static final int NONE = -1;
  static final int TEXT = 0;
  static final int LONG = 1;
  static final int INT = 2;
  static final int SHORT_INT = 3;
  static final int BYTE = 4;

  /** How a list type's labels are read: TEXT, an integer width, or NONE (not read here). */
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

  private final int actualKind;
  private final int predictedKind;
  private final boolean readable;
  /** Whether dictionary-encoded text may be compared by number (the caller only counts). */
  private final boolean byNumber;

  // after read(): the actual side's distinct labels at [0, na), the predicted side's at
  // [at, at + np); shared[i]: the other side holds label i too; tp: how many A and P share.
  // A text label is its bytes where they lie (bases, addresses, sizes) and their hash, and
  // up to eight bytes also packed in numbers; an integer label its value.
  transient Object[] bases;
  transient long[] addresses;
  transient int[] sizes;
  transient int[] hashes;
  transient long[] numbers;
  transient boolean[] shared;
  int na;
  int np;
  int at;
  long tp;

  /**
   * A reader of lists of these kinds; {@code byNumber}: the caller reads only the counts
   * (na, np, tp and shared), never a label, so dictionary-encoded text may be read as
   * numbers.
   */
  LabelSets(int actualKind, int predictedKind, boolean byNumber) {
    this.actualKind = actualKind;
    this.predictedKind = predictedKind;
    this.readable =
        actualKind != NONE && predictedKind != NONE && (actualKind == TEXT) == (predictedKind == TEXT);
    this.byNumber = byNumber && actualKind == TEXT;
  }

  /** Whether the lists are text rather than integers. */
  boolean text() {
    return actualKind == TEXT;
  }

  /** Reads one row's lists; false (nothing read) where their types are not read here. */
  boolean read(ArrayData a, ArrayData p) {
    if (!readable) {
      return false;
    }
    int la = a.numElements();
    int lp = p.numElements();
    boolean pairwise = la <= SHORT && lp <= SHORT;
    at = pairwise ? SHORT : la;
    reserve(at + (pairwise ? SHORT : lp));
    coded = byNumber && numbered(a, p);
    boolean asText = text() && !coded;
    if (pairwise) {
      na = distinct(a, actualKind, 0, null, 0);
      np = distinct(p, predictedKind, at, null, 1);
      tp = 0;
      for (int i = 0; i < na; i++) {
        for (int j = at; j < at + np; j++) {
          if (asText ? sameText(i, j) : numbers[i] == numbers[j]) {
            shared[i] = shared[j] = true;
            tp++;
            break;
          }
        }
      }
      return true;
    }
    HashMap<Object, Integer> inA = new HashMap<>();
    na = distinct(a, actualKind, 0, inA, 0);
    np = distinct(p, predictedKind, at, new HashMap<>(), 1);
    tp = 0;
    for (int j = at; j < at + np; j++) {
      Integer i = inA.get(asText ? text(j) : (Object) numbers[j]);
      if (i != null) {
        shared[i] = shared[j] = true;
        tp++;
      }
    }
    return true;
  }

  private void reserve(int size) {
    if (shared == null || shared.length < size) {
      int n = Math.max(size, 2 * SHORT);
      bases = new Object[n];
      addresses = new long[n];
      sizes = new int[n];
      numbers = new long[n];
      hashes = new int[n];
      shared = new boolean[n];
    }
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

  /**
   * The distinct non-NULL labels of {@code d} into the scratch from {@code from}: how many.
   * With {@code index}, a long list's: each label's slot goes in it; else compared pairwise.
   * {@code side}: 0 for the actual list, 1 for the predicted.
   */
  private int distinct(
      ArrayData d, int kind, int from, HashMap<Object, Integer> index, int side) {
    int k = 0;
    for (int i = 0; i < d.numElements(); i++) {
      if (d.isNullAt(i)) {
        continue;
      }
      int slot = from + k;
      boolean seen = false;
      if (kind == TEXT && !coded) {
        textAt(d, i, slot);
        if (index != null) {
          seen = index.putIfAbsent(text(slot), slot) != null;
        } else {
          for (int j = from; j < slot && !seen; j++) {
            seen = sameText(j, slot);
          }
        }
      } else {
        long x = coded ? dictionaryNumber(side, i) : number(d, kind, i);
        if (index != null) {
          seen = index.putIfAbsent(x, slot) != null;
        } else {
          for (int j = from; j < slot && !seen; j++) {
            seen = numbers[j] == x;
          }
        }
        numbers[slot] = x;
      }
      if (!seen) {
        shared[slot] = false;
        k++;
      }
    }
    return k;
  }

  /** Reads the text at {@code d}'s {@code i} into {@code slot}: where its bytes lie, its hash. */
  private void textAt(ArrayData d, int i, int slot) {
    Object base;
    long address;
    int size;
    if (d instanceof UnsafeArrayData) { // as UnsafeArrayData.getUTF8String, without the object
      UnsafeArrayData u = (UnsafeArrayData) d;
      long offsetAndSize = u.getLong(i);
      base = u.getBaseObject();
      address = u.getBaseOffset() + (int) (offsetAndSize >> 32);
      size = (int) offsetAndSize;
    } else {
      UTF8String s = d.getUTF8String(i);
      base = s.getBaseObject();
      address = s.getBaseOffset();
      size = s.numBytes();
    }
    bases[slot] = base;
    addresses[slot] = address;
    sizes[slot] = size;
    if (size <= 8) {
      long bytes = packed(base, address, size);
      numbers[slot] = bytes;
      hashes[slot] = shortHash(bytes, size);
    } else {
      hashes[slot] = hash(base, address, size);
    }
  }

  // Spark's private fields that lead from a ColumnarArray to its dictionary: the array's
  // vector and offset, a writable vector's dictionary, and the Parquet dictionary that a
  // ParquetDictionary wraps (one per column chunk, where Spark wraps it anew at each page).
  // ARRAY_DATA is found last, so it is null unless all four are, and only it is checked:
  // where it is null, text is compared by its bytes.
  private static final VarHandle ARRAY_DATA;
  private static final VarHandle ARRAY_OFFSET;
  private static final VarHandle VECTOR_DICTIONARY;
  private static final VarHandle PARQUET_DICTIONARY;

  static {
    VarHandle data = null;
    VarHandle offset = null;
    VarHandle dictionary = null;
    VarHandle parquet = null;
    try {
      MethodHandles.Lookup array =
          MethodHandles.privateLookupIn(ColumnarArray.class, MethodHandles.lookup());
      offset = array.findVarHandle(ColumnarArray.class, "offset", int.class);
      dictionary =
          MethodHandles.privateLookupIn(WritableColumnVector.class, MethodHandles.lookup())
              .findVarHandle(WritableColumnVector.class, "dictionary", Dictionary.class);
      parquet =
          MethodHandles.privateLookupIn(ParquetDictionary.class, MethodHandles.lookup())
              .findVarHandle(
                  ParquetDictionary.class, "dictionary", org.apache.parquet.column.Dictionary.class);
      data = array.findVarHandle(ColumnarArray.class, "data", ColumnVector.class);
    } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
      data = null;
    }
    ARRAY_DATA = data;
    ARRAY_OFFSET = offset;
    VECTOR_DICTIONARY = dictionary;
    PARQUET_DICTIONARY = parquet;
  }

  /** Whether Spark's private fields that dictionary-encoded text is read through were found. */
  static boolean readsDictionaries() {
    return ARRAY_DATA != null;
  }

  // while read() reads a row by number: whether it does, each side's vector of dictionary
  // ids and the list's first index in it, and the numbers of the current pair of dictionaries
  private transient boolean coded;
  private transient WritableColumnVector[] ids;
  private transient int[] offsets;
  private transient DictionaryNumbers numbering;
  /**
   * Where set (LabelCodes), the task's interner: dictionary entries are numbered by their
   * codes in it, so that a label read by number is its code.
   */
  transient LabelCodes.Interner interner;

  /**
   * Whether both lists are dictionary-encoded text in Spark's column vectors, whose
   * dictionaries can be numbered; if so, sets {@link #ids}, {@link #offsets} and {@link
   * #numbering} to read them.
   */
  private boolean numbered(ArrayData a, ArrayData p) {
    if (ARRAY_DATA == null) {
      return false;
    }
    if (ids == null) {
      ids = new WritableColumnVector[2];
      offsets = new int[2];
    }
    org.apache.parquet.column.Dictionary da = parquetDictionary(a, 0);
    org.apache.parquet.column.Dictionary dp = da == null ? null : parquetDictionary(p, 1);
    if (dp == null) {
      return false;
    }
    if (numbering == null
        || numbering.actual != da
        || numbering.predicted != dp
        || numbering.interner != interner) {
      numbering = new DictionaryNumbers(da, dp, interner);
    }
    return true;
  }

  /** The Parquet dictionary of a ColumnarArray's dictionary-encoded text, else null. */
  private org.apache.parquet.column.Dictionary parquetDictionary(ArrayData d, int side) {
    if (!(d instanceof ColumnarArray)) {
      return null;
    }
    ColumnVector data = (ColumnVector) ARRAY_DATA.get((ColumnarArray) d);
    if (!(data instanceof WritableColumnVector)) {
      return null;
    }
    WritableColumnVector vector = (WritableColumnVector) data;
    Dictionary dictionary = (Dictionary) VECTOR_DICTIONARY.get(vector);
    WritableColumnVector coded = vector.getDictionaryIds();
    if (!(dictionary instanceof ParquetDictionary) || coded == null) {
      return null;
    }
    ids[side] = coded;
    offsets[side] = (int) ARRAY_OFFSET.get((ColumnarArray) d);
    return (org.apache.parquet.column.Dictionary)
        PARQUET_DICTIONARY.get((ParquetDictionary) dictionary);
  }

  /** The number of the {@code side}'s list's label {@code i} (read by number). */
  private long dictionaryNumber(int side, int i) {
    int id = ids[side].getInt(offsets[side] + i);
    return (side == 0 ? numbering.ofActual : numbering.ofPredicted)[id];
  }

  /**
   * Numbers for the entries of an actual and a predicted Parquet dictionary: entries of
   * equal bytes, on either side, get one number; others differ. Made once per pair of
   * column chunks, from every entry of both (a dictionary holds at most one page).
   */
  private static final class DictionaryNumbers {
    final org.apache.parquet.column.Dictionary actual;
    final org.apache.parquet.column.Dictionary predicted;
    final int[] ofActual;
    final int[] ofPredicted;
    final LabelCodes.Interner interner;

    DictionaryNumbers(
        org.apache.parquet.column.Dictionary actual,
        org.apache.parquet.column.Dictionary predicted,
        LabelCodes.Interner interner) {
      this.actual = actual;
      this.predicted = predicted;
      this.interner = interner;
      HashMap<Text, Integer> number = new HashMap<>();
      this.ofActual = numbered(actual, number, interner);
      this.ofPredicted = numbered(predicted, number, interner);
    }

    private static int[] numbered(
        org.apache.parquet.column.Dictionary d,
        HashMap<Text, Integer> number,
        LabelCodes.Interner interner) {
      int[] of = new int[d.getMaxId() + 1];
      for (int id = 0; id < of.length; id++) {
        Text entry = new Text(d.decodeToBinary(id).getBytes());
        if (interner != null) {
          of[id] = interner.code(entry);
          continue;
        }
        Integer next = number.size();
        Integer known = number.putIfAbsent(entry, next);
        of[id] = known != null ? known : next;
      }
      return of;
    }
  }

  private static final boolean UNALIGNED = Platform.unaligned();
  static final long K1 = 0x9E3779B97F4A7C15L;
  private static final long K2 = 0xC2B2AE3D27D4EB4FL;

  /**
   * The {@code size} (at most 8) bytes at {@code address} of {@code base} in one long: from
   * 4 bytes on, the first four and the last four (they overlap below 8), which tell two
   * texts of one size apart as their bytes do.
   */
  private static long packed(Object base, long address, int size) {
    if (size >= 4 && UNALIGNED) {
      long first = Platform.getInt(base, address) & 0xFFFFFFFFL;
      return first | ((long) Platform.getInt(base, address + size - 4) << 32);
    }
    long bytes = 0;
    for (int k = 0; k < size; k++) {
      bytes |= (Platform.getByte(base, address + k) & 0xFFL) << (8 * k);
    }
    return bytes;
  }

  /** The hash of a text of {@code size} (at most 8) bytes, {@code bytes} as {@link #packed}. */
  private static int shortHash(long bytes, int size) {
    return mixed((size + 1) * K1 ^ bytes * K2);
  }

  /** {@code h} mixed so that each of its bits moves every bit of the hash (Murmur3's fmix64). */
  private static int mixed(long h) {
    h ^= h >>> 33;
    h *= 0xFF51AFD7ED558CCDL;
    h ^= h >>> 33;
    h *= 0xC4CEB9FE1A85EC53L;
    return (int) (h ^ (h >>> 33));
  }

  /**
   * The hash of the {@code size} bytes at {@code address} of {@code base}: up to eight bytes
   * as one long; longer, eight bytes at a step (the last step overlapping the one before),
   * where Murmur3's (UTF8String's) takes four and then each byte of the tail, which measured
   * a quarter of micro_f1's time on text. Computed afresh wherever a label is read, never
   * stored.
   */
  static int hash(Object base, long address, int size) {
    if (size <= 8) {
      return shortHash(packed(base, address, size), size);
    }
    long h = (size + 1) * K1;
    if (UNALIGNED) {
      int k = 0;
      for (; k + 8 < size; k += 8) {
        h = Long.rotateLeft(h ^ (Platform.getLong(base, address + k) * K2), 31) * K1;
      }
      h = Long.rotateLeft(h ^ (Platform.getLong(base, address + size - 8) * K2), 31) * K1;
    } else {
      for (int k = 0; k < size; k++) {
        h = Long.rotateLeft(h ^ ((Platform.getByte(base, address + k) & 0xFFL) * K2), 31) * K1;
      }
    }
    return mixed(h);
  }

  /** Whether text labels {@code i} and {@code j} have the same bytes. */
  boolean sameText(int i, int j) {
    if (hashes[i] != hashes[j] || sizes[i] != sizes[j]) {
      return false;
    }
    return sizes[i] <= 8
        ? numbers[i] == numbers[j] // up to eight bytes: packed in one long by textAt
        : ByteArrayMethods.arrayEquals(bases[i], addresses[i], bases[j], addresses[j], sizes[i]);
  }

  /**
   * The code of text label {@code i} in {@link #interner}: read by number, its number; else
   * looked up by its bytes.
   */
  long code(int i) {
    return coded ? numbers[i] : interner.code(this, i);
  }

  /** Text label {@code i} as a UTF8String over its bytes where they lie (valid for the row). */
  UTF8String text(int i) {
    return UTF8String.fromAddress(bases[i], addresses[i], sizes[i]);
  }

  /** Text label {@code i} as a {@link Text} of its own bytes (a copy). */
  Text copy(int i) {
    byte[] b = new byte[sizes[i]];
    Platform.copyMemory(bases[i], addresses[i], b, Platform.BYTE_ARRAY_OFFSET, sizes[i]);
    return new Text(b);
  }

  /** A text label kept beyond its row: its bytes, compared and hashed as {@link #hash}. */
  static final class Text {
    final byte[] bytes;
    private final int hash;
    /** Up to eight bytes: packed as {@link #packed} packs them (0 for a longer text). */
    private final long packed;

    Text(byte[] bytes) {
      this.bytes = bytes;
      this.hash = LabelSets.hash(bytes, Platform.BYTE_ARRAY_OFFSET, bytes.length);
      this.packed =
          bytes.length <= 8 ? LabelSets.packed(bytes, Platform.BYTE_ARRAY_OFFSET, bytes.length) : 0;
    }

    @Override
    public int hashCode() {
      return hash;
    }

    @Override
    public boolean equals(Object other) {
      return other instanceof Text && Arrays.equals(bytes, ((Text) other).bytes);
    }
  }

  /**
   * Label {@code i} as a key to look up in a HashMap whose keys are the labels as {@link
   * Text}s or Longs (integers), without making either per row: HashMap calls the key it is
   * given to compare ({@code key.equals(stored)}) and takes its hash. One probe per reader,
   * set anew on each call; it is never stored.
   */
  Object probe(int i) {
    if (probe == null) {
      probe = new Probe();
    }
    probe.i = i;
    return probe;
  }

  private transient Probe probe;

  private final class Probe {
    int i;

    @Override
    public int hashCode() {
      return text() ? hashes[i] : Long.hashCode(numbers[i]);
    }

    @Override
    public boolean equals(Object other) {
      if (!text()) {
        return other instanceof Long && (Long) other == numbers[i];
      }
      if (!(other instanceof Text)) {
        return false;
      }
      Text t = (Text) other;
      if (t.bytes.length != sizes[i]) {
        return false;
      }
      return sizes[i] <= 8
          ? t.packed == numbers[i] // packed alike by textAt
          : ByteArrayMethods.arrayEquals(
              t.bytes, Platform.BYTE_ARRAY_OFFSET, bases[i], addresses[i], sizes[i]);
    }
  }
}
