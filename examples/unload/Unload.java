import java.io.File;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;

/**
 * Class-unloading example: loads the class Gen (compiled separately into gen/) through a fresh class
 * loader many times, runs its method hot enough to be JIT-compiled, drops the loader and collects it.
 * Compiled code of unloaded classes is freed and its addresses are later reused by other methods.
 * Usage: java -cp classes Unload <dir containing Gen.class> [rounds]
 */
public class Unload {
  public static void main(String[] args) throws Exception {
    URL genDir = new File(args[0]).toURI().toURL();
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 40;
    long sum = 0;
    for (int r = 0; r < rounds; r++) {
      try (URLClassLoader loader = new URLClassLoader(new URL[] { genDir }, null)) {
        Method f = loader.loadClass("Gen").getMethod("f", int.class);
        for (int i = 0; i < 20000; i++) sum += (int) f.invoke(null, i);
      }
      if (r % 10 == 9) { System.gc(); Thread.sleep(50); }
    }
    System.gc();
    Thread.sleep(200);
    System.out.println("sum=" + sum);
  }
}
