/**
 * Exception-heavy example: explicit throws caught up the stack, and null dereferences in hot compiled code
 * (HotSpot compiles those as implicit null checks: the load faults, a signal handler turns it into the
 * NullPointerException), plus array bounds failures. Deterministic output.
 */
public class Exceptions {
  static final class Node { int v; Node next; Node(int v, Node next) { this.v = v; this.next = next; } }

  static int depth(int n) {
    if (n == 0) throw new IllegalStateException("bottom");
    return depth(n - 1) + 1;
  }

  static int sumOrNull(Node n) {
    return n.v + n.next.v; // n.next is null for some nodes: implicit null check
  }

  public static void main(String[] args) {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 20000;
    Node withNext = new Node(1, new Node(2, null));
    Node alone = new Node(3, null);
    long caught = 0, sum = 0;
    for (int i = 0; i < rounds; i++) {
      try {
        sum += sumOrNull((i % 10 == 0) ? alone : withNext);
      } catch (NullPointerException e) {
        caught++;
      }
      if (i % 100 == 0) {
        try {
          depth(5);
        } catch (IllegalStateException e) {
          caught++;
        }
      }
      int[] a = new int[4];
      try {
        a[i % 5] = i;
      } catch (ArrayIndexOutOfBoundsException e) {
        caught++;
      }
    }
    System.out.println("sum=" + sum + " caught=" + caught);
  }
}
