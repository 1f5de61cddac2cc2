/**
 * Recursion example: a naive Fibonacci (a deep, narrow call tree whose calls C2 compiles as real calls beyond its
 * recursive-inlining limit), a mutually recursive even/odd pair, and a recursive walk over a binary tree built
 * once. Deterministic output. Argument: how many rounds (default 200).
 */
public class Recursion {
  static final class Node {
    final int value;
    final Node left, right;
    Node(int value, Node left, Node right) { this.value = value; this.left = left; this.right = right; }
  }

  static int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

  static boolean isEven(int n) { return n == 0 || isOdd(n - 1); }
  static boolean isOdd(int n) { return n != 0 && isEven(n - 1); }

  static Node build(int depth, int value) {
    if (depth == 0) return null;
    return new Node(value, build(depth - 1, 2 * value), build(depth - 1, 2 * value + 1));
  }

  static long sum(Node n) {
    if (n == null) return 0;
    return n.value + sum(n.left) + sum(n.right);
  }

  public static void main(String[] args) {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 200;
    Node tree = build(10, 1);
    long f = 0, t = 0;
    int even = 0;
    for (int i = 0; i < rounds; i++) {
      f += fib(12 + i % 4);
      if (isEven(50 + i % 7)) even++;
      t += sum(tree);
    }
    System.out.println("fib=" + f + " even=" + even + " tree=" + t);
  }
}
