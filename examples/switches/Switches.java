/** Switch-heavy example: a dense tableswitch, a sparse lookupswitch and a string switch in hot loops. */
public class Switches {
  static int dense(int x) {
    switch (x & 15) {
      case 0: return 3; case 1: return x + 1; case 2: return x * 2; case 3: return x ^ 5;
      case 4: return 7; case 5: return x - 9; case 6: return x >> 1; case 7: return x << 2;
      case 8: return 11; case 9: return x % 13; case 10: return -x; case 11: return x | 8;
      case 12: return x & 6; case 13: return 17; case 14: return x + 19; default: return 23;
    }
  }

  static int sparse(int x) {
    switch (x % 1000) {
      case 1: return 1; case 10: return 2; case 100: return 3; case 250: return 4;
      case 500: return 5; case 777: return 6; case 999: return 7; default: return 0;
    }
  }

  static int word(String s) {
    switch (s) {
      case "alpha": return 1; case "beta": return 2; case "gamma": return 3; case "delta": return 4;
      default: return 0;
    }
  }

  public static void main(String[] args) {
    int n = args.length > 0 ? Integer.parseInt(args[0]) : 200000;
    String[] words = { "alpha", "beta", "gamma", "delta", "omega" };
    long s = 0;
    for (int i = 0; i < n; i++) s += dense(i) + sparse(i * 7) + word(words[i % words.length]);
    System.out.println("switches=" + s);
  }
}
