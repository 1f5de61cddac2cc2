/**
 * JIT-heavy example: a small getter inlined two levels deep (run -> twice -> getV), a virtual call
 * site that becomes megamorphic (inline caches are patched), and a long loop in main that is
 * OSR-compiled. Deterministic output.
 */
public class JitHot {
  interface Shape { long area(); }
  static final class Square implements Shape { final long s; Square(long s) { this.s = s; } public long area() { return s * s; } }
  static final class Rect implements Shape { final long w, h; Rect(long w, long h) { this.w = w; this.h = h; } public long area() { return w * h; } }
  static final class Tri implements Shape { final long b, h; Tri(long b, long h) { this.b = b; this.h = h; } public long area() { return b * h / 2; } }

  private final int v;
  JitHot(int v) { this.v = v; }
  int getV() { return v; }
  static int twice(JitHot h) { return h.getV() * 2; }

  static long run(JitHot[] hs, int n) {
    long s = 0;
    for (int i = 0; i < n; i++) s += twice(hs[i & 7]);
    return s;
  }

  static long areas(Shape[] shapes, int n) {
    long s = 0;
    for (int i = 0; i < n; i++) s += shapes[i % shapes.length].area();
    return s;
  }

  static long lambdas(java.util.function.IntUnaryOperator op, int n) {
    long s = 0;
    for (int i = 0; i < n; i++) s += op.applyAsInt(i);
    return s;
  }

  public static void main(String[] args) {
    // the work's scale (1 by default; a fraction such as 0.1 gives a trace small enough to compare with ground truth)
    double scale = args.length > 0 ? Double.parseDouble(args[0]) : 1;
    int runs = (int) (5000 * scale), phase = (int) (2000 * scale), lambdaRuns = (int) (3000 * scale), osr = (int) (20_000_000 * scale);
    JitHot[] hs = new JitHot[8];
    for (int i = 0; i < 8; i++) hs[i] = new JitHot(i);
    long s = 0;
    for (int i = 0; i < runs; i++) s += run(hs, 1000);
    // first monomorphic, then polymorphic, then megamorphic: call sites and inline caches get rewritten
    Shape[] one = { new Square(3) };
    Shape[] two = { new Square(3), new Rect(2, 5) };
    Shape[] three = { new Square(3), new Rect(2, 5), new Tri(4, 6) };
    long a = 0;
    for (int i = 0; i < phase; i++) a += areas(one, 100);
    for (int i = 0; i < phase; i++) a += areas(two, 100);
    for (int i = 0; i < phase; i++) a += areas(three, 100);
    // a lambda (a hidden class) inlined into compiled code
    long l = 0;
    for (int i = 0; i < lambdaRuns; i++) l += lambdas(x -> x * 3 + 1, 100);
    long t = 0;
    for (int i = 0; i < osr; i++) t += hs[i & 7].getV() ^ i; // OSR
    System.out.println("run=" + s + " areas=" + a + " lambdas=" + l + " osr=" + t);
  }
}
