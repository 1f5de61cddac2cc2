/** Loaded repeatedly by Unload through throw-away class loaders. */
public class Gen {
  public static int f(int x) {
    int s = 0;
    for (int i = 0; i < 100; i++) s += (x ^ i) * 7;
    return s;
  }
}
