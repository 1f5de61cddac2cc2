# A small mixed Python workload for Jython: objects and method calls (a Richards-like scheduler), dictionaries and
# strings (word counting), list sorting and numeric loops. Deterministic; argument: repetitions.
import sys

class Task(object):
    def __init__(self, ident, prio, work):
        self.ident = ident
        self.prio = prio
        self.work = work
        self.done = 0

    def step(self, sched):
        if self.work > 0:
            self.work -= 1
            self.done += 1
            if self.done % 7 == 0:
                sched.boost(self)
            return True
        return False

class Scheduler(object):
    def __init__(self):
        self.tasks = []
        self.switches = 0

    def add(self, t):
        self.tasks.append(t)

    def boost(self, t):
        t.prio = (t.prio * 31 + 7) % 97

    def run(self):
        live = list(self.tasks)
        while live:
            live.sort(key=lambda t: (-t.prio, t.ident))
            nxt = []
            for t in live:
                self.switches += 1
                if t.step(self):
                    nxt.append(t)
            live = nxt
        return self.switches

def lcg(seed):
    while True:
        seed = (seed * 1103515245 + 12345) & 0x7fffffff
        yield seed

WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa", "lambda", "mu",
         "nu", "xi", "omicron", "pi", "rho", "sigma", "tau", "upsilon", "phi", "chi", "psi", "omega"]

def words(n, seed):
    g = lcg(seed)
    out = []
    for _ in range(n):
        out.append(WORDS[next(g) % len(WORDS)] + str(next(g) % 13))
    return " ".join(out)

def count(text):
    c = {}
    for w in text.split():
        c[w] = c.get(w, 0) + 1
    top = sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))[:5]
    return top

def sieve(n):
    flags = [True] * (n + 1)
    flags[0] = flags[1] = False
    i = 2
    while i * i <= n:
        if flags[i]:
            for j in range(i * i, n + 1, i):
                flags[j] = False
        i += 1
    return sum(1 for f in flags if f)

def main(reps):
    total = 0
    for r in range(reps):
        s = Scheduler()
        for i in range(40):
            s.add(Task(i, (i * 17) % 23, 20 + i % 9))
        total += s.run()
        total += len(count(words(3000, r + 1)))
        total += sieve(20000 + r)
    print("jython bench: %d reps, checksum %d" % (reps, total))

if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10)
