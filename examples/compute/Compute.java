import java.util.HashMap;
import java.util.Map;

/** Compute-heavy example for overhead measurements: hashing, string building, maps. Runs for N seconds' worth of fixed work. */
public class Compute {
  public static void main(String[] args) {
    int iterations = args.length > 0 ? Integer.parseInt(args[0]) : 2000;
    long h = 0;
    for (int it = 0; it < iterations; it++) {
      HashMap<String, Integer> m = new HashMap<>();
      for (int i = 0; i < 1000; i++) { String k = "k" + i + "_" + (i * 31); m.put(k, k.length()); }
      StringBuilder sb = new StringBuilder();
      for (Map.Entry<String, Integer> e : m.entrySet()) if ((e.getValue() & 1) == 0) sb.append(e.getKey().toUpperCase());
      h += sb.toString().hashCode();
    }
    System.out.println("iterations=" + iterations + " h=" + h);
  }
}
