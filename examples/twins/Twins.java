import java.util.ArrayList;
import java.util.List;

/**
 * Twins: plug-in classes whose methods have the same bytecode (only constant-pool operands differ), loaded and
 * instantiated by reflection one after another, as java.util.ServiceLoader does. Intel PT shows the interpreter's
 * opcodes but not which method runs, and reflection leaves no call site to resolve, so the decoder must tell the
 * twins apart by what it knows besides the opcodes: when each class was loaded, that a class is initialized once,
 * and which class an object was last made of. Usage: java Twins [rounds]
 */
public class Twins {
  interface Plugin {
    int priority();

    String name();
  }

  static int registered;

  static int register(String tag) {
    registered += tag.length();
    return registered;
  }

  static Object tag(String tag) {
    registered += tag.length();
    return tag;
  }

  // Interfaces with twin static initializers, run by the getstatic that reads their field (as loggers in
  // `Log LOG = LogFactory.getLog(..)` fields are): the instruction names the class being initialized.
  interface Tag1 {
    Object T = tag("T1");
  }

  interface Tag2 {
    Object T = tag("T2");
  }

  public static class P1 implements Plugin {
    static final int ORDER = register("P1");
    private final int p;

    public P1() {
      p = ORDER * 3;
    }

    public int priority() {
      return p;
    }

    public String name() {
      return "P1";
    }
  }

  public static class P2 implements Plugin {
    static final int ORDER = register("P2");
    private final int p;

    public P2() {
      p = ORDER * 3;
    }

    public int priority() {
      return p;
    }

    public String name() {
      return "P2";
    }
  }

  public static class P3 implements Plugin {
    static final int ORDER = register("P3");
    private final int p;

    public P3() {
      p = ORDER * 3;
    }

    public int priority() {
      return p;
    }

    public String name() {
      return "P3";
    }
  }

  public static class P4 implements Plugin {
    static final int ORDER = register("P4");
    private final int p;

    public P4() {
      p = ORDER * 3;
    }

    public int priority() {
      return p;
    }

    public String name() {
      return "P4";
    }
  }

  // Twin classes of which both are made but only the first one's method is called, after the second was made:
  // the class used last is then the wrong guess. Only the VM knows which ran (its counters, METHOD_RUNS).
  interface Doubler {
    int twice();
  }

  public static class Q1 implements Doubler {
    private final int n;

    public Q1(int n) {
      this.n = n;
    }

    public int twice() {
      return n * 2;
    }
  }

  public static class Q2 implements Doubler {
    private final int n;

    public Q2(int n) {
      this.n = n;
    }

    public int twice() {
      return n * 2;
    }
  }

  // Twins that both run, objects made long before the calls: once each has run (the interpreter rewrote its
  // bytecode), the class made last (S2) is the guess for every call. S2.v runs 3 times, then S1.v the other
  // rounds: the VM's count of S2.v's entries (METHOD_RUNS) says when S2.v has had all its calls.
  interface Valued {
    int v();
  }

  public static class S1 implements Valued {
    private final int k;

    public S1(int k) {
      this.k = k;
    }

    public int v() {
      return k + 5;
    }
  }

  public static class S2 implements Valued {
    private final int k;

    public S2(int k) {
      this.k = k;
    }

    public int v() {
      return k + 5;
    }
  }

  // A switch whose cases differ only in which twin they call (PT shows the dispatch, not the case taken), as an
  // ANTLR lexer's mTokens (a tableswitch: the interpreter picks the case with arithmetic): only case 1 runs. R1 is loaded and initialized (its touch() runs), R1.v never runs.
  static class R1 {
    static int touched;

    static void touch() {
      touched++;
    }

    static int v(int x) {
      return x + 1;
    }
  }

  static class R2 {
    static int v(int x) {
      return x + 1;
    }
  }

  static int pick(int k, int x) {
    switch (k) {
      case 0:
        return R1.v(x);
      case 1:
        return R2.v(x);
      case 2:
        return x * 2;
      case 3:
        return x * 3;
      default:
        return x;
    }
  }

  // Switch cases that differ only in a constant, each reading a field: only case 2 runs. The interpreter rewrites a
  // getfield the first time it runs it; at VM death the cases that never ran still hold getfield (METHOD_RUNS).
  static class Acc {
    private final int base;

    Acc(int base) {
      this.base = base;
    }

    int arm(int k) {
      switch (k) {
        case 0:
          return base + 10;
        case 1:
          return base + 20;
        case 2:
          return base + 30;
        case 3:
          return base + 40;
        default:
          return 0;
      }
    }
  }

  // Switch cases that differ only in which constant they read, run while their class is being initialized (its
  // initializer touches a table whose initializer calls of() for each constant, twice): the VM keeps a static field
  // of a class being initialized unresolved, so every getstatic there runs the slow path, at every case (h2's
  // IntervalQualifier.valueOf, called from TypeInfo's initializer).
  static class Unit {
    static final Unit A = new Unit();
    static final Unit B = new Unit();
    static final Unit C = new Unit();
    static final Unit D = new Unit();

    static Unit of(int k) {
      switch (k) {
        case 0:
          return A;
        case 1:
          return B;
        case 2:
          return C;
        case 3:
        default:
          return D;
      }
    }

    static {
      UnitTable.touch();
    }
  }

  // (an interface: no constructor line that never runs; calling its static method initializes it)
  interface UnitTable {
    Unit[] ALL = fill();

    static Unit[] fill() {
      Unit[] all = new Unit[8];
      for (int k = 0; k < 8; k++) all[k] = Unit.of(k % 4);
      return all;
    }

    static void touch() {}
  }

  // (ifs, not a switch: PT shows which way an if went, but all of a switch's cases here start with the same opcodes)
  static Plugin fresh(int k) {
    if (k == 0) return new P1();
    if (k == 1) return new P2();
    if (k == 2) return new P3();
    return new P4();
  }

  public static void main(String[] args) throws Exception {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 1;
    List<Plugin> plugins = new ArrayList<>();
    // as ServiceLoader: each provider is loaded, initialized and instantiated before the next one
    for (String n : new String[] {"Twins$P1", "Twins$P2", "Twins$P3", "Twins$P4"}) {
      Class<?> c = Class.forName(n);
      Plugin p = (Plugin) c.getDeclaredConstructor().newInstance();
      plugins.add(p);
      System.out.println(p.name() + " " + p.priority());
    }
    // both loaded (not initialized), Tag2 last; then initialized in the other order by their fields' first reads
    Class.forName("Twins$Tag1", false, Twins.class.getClassLoader());
    Class.forName("Twins$Tag2", false, Twins.class.getClassLoader());
    System.out.println(Tag1.T + " " + Tag2.T);
    long sum = 0;
    for (int r = 0; r < rounds; r++) for (Plugin p : plugins) sum += p.priority();
    // objects used right after they are made
    int names = 0;
    for (int r = 0; r < rounds; r++) names += fresh(r * 7 % 4).name().length();
    Doubler first = new Q1(rounds);
    Doubler second = new Q2(rounds + 1);
    int doubled = 0;
    for (int r = 0; r < rounds; r++) doubled += first.twice();
    R1.touch();
    for (int r = 0; r < rounds; r++) doubled += pick(1, r);
    Valued s1 = new S1(rounds);
    Valued s2 = new S2(rounds);
    for (int r = 0; r < 3; r++) doubled += s2.v();
    for (int r = 3; r < rounds; r++) doubled += s1.v();
    Acc acc = new Acc(rounds);
    for (int r = 0; r < rounds; r++) doubled += acc.arm(2);
    System.out.println("sum " + sum + " names " + names + " doubled " + doubled + " " + (second != null) + " " + (Unit.D == UnitTable.ALL[3]));
  }
}
