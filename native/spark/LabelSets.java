// One row's two label lists read in place, for mlsql's Spark expression (SetCounts) and its
// per-label aggregate (LabelCounts): each side's distinct non-NULL labels (DESIGN.md section
// 1) and which of them the other side holds too.
//
// Lists come as Spark's ArrayData, never converted: text is compared by its bytes, as Spark
// compares text without a collation, read where it lies in an UnsafeArrayData (Spark's rows)
// and through a UTF8String in other arrays; integers by value whatever their width. Lists of
// up to 32 labels are compared pairwise in scratch arrays (text by hash first); longer ones through hash maps. The scratch is made once per task's copy of the
// reader, so one reader serves one thread.
package mlsql.spark;

import java.io.Serializable;
import java.util.Arrays;
import java.util.HashMap;

import org.apache.spark.sql.catalyst.expressions.UnsafeArrayData;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StringType;
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

  LabelSets(int actualKind, int predictedKind) {
    this.actualKind = actualKind;
    this.predictedKind = predictedKind;
    this.readable =
        actualKind != NONE && predictedKind != NONE && (actualKind == TEXT) == (predictedKind == TEXT);
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
    if (pairwise) {
      na = distinct(a, actualKind, 0, null);
      np = distinct(p, predictedKind, at, null);
      tp = 0;
      for (int i = 0; i < na; i++) {
        for (int j = at; j < at + np; j++) {
          if (text() ? sameText(i, j) : numbers[i] == numbers[j]) {
            shared[i] = shared[j] = true;
            tp++;
            break;
          }
        }
      }
      return true;
    }
    HashMap<Object, Integer> inA = new HashMap<>();
    na = distinct(a, actualKind, 0, inA);
    np = distinct(p, predictedKind, at, new HashMap<>());
    tp = 0;
    for (int j = at; j < at + np; j++) {
      Integer i = inA.get(text() ? text(j) : (Object) numbers[j]);
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
   */
  private int distinct(ArrayData d, int kind, int from, HashMap<Object, Integer> index) {
    int k = 0;
    for (int i = 0; i < d.numElements(); i++) {
      if (d.isNullAt(i)) {
        continue;
      }
      int slot = from + k;
      boolean seen = false;
      if (kind == TEXT) {
        textAt(d, i, slot);
        if (index != null) {
          seen = index.putIfAbsent(text(slot), slot) != null;
        } else {
          for (int j = from; j < slot && !seen; j++) {
            seen = sameText(j, slot);
          }
        }
      } else {
        long x = number(d, kind, i);
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

    Text(byte[] bytes) {
      this.bytes = bytes;
      this.hash = LabelSets.hash(bytes, Platform.BYTE_ARRAY_OFFSET, bytes.length);
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
      byte[] b = ((Text) other).bytes;
      return b.length == sizes[i]
          && ByteArrayMethods.arrayEquals(
              b, Platform.BYTE_ARRAY_OFFSET, bases[i], addresses[i], sizes[i]);
    }
  }
}
