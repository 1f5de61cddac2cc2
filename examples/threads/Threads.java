import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/** Multi-threaded example: N named worker threads each run a small compute loop. */
public class Threads {
  static long work(int seed, int n) {
    long h = seed;
    for (int i = 0; i < n; i++) h = h * 31 + (i ^ seed);
    return h;
  }

  public static void main(String[] args) throws Exception {
    int n = args.length > 0 ? Integer.parseInt(args[0]) : 4;
    AtomicLong total = new AtomicLong();
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < n; t++) {
      final int seed = t;
      Thread th = new Thread(() -> total.addAndGet(work(seed, 2_000_000)), "worker-" + t);
      threads.add(th);
      th.start();
    }
    for (Thread th : threads) th.join();
    System.out.println("threads=" + n + " total=" + total.get());
  }
}
