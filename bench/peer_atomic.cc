// peer_atomic.cc - the C++ peers for pfbench's pp and wake-none workloads,
// same harness and output format as pfbench:
//   built as peer_atomic: C++20 std::atomic<uint32_t>::wait/notify_one
//                         (libstdc++), reported as backend "std::atomic";
//   built as peer_boost (-DPEER_BOOST): boost::atomic<uint32_t>::wait/
//                         notify_one (Boost.Atomic >= 1.78), "boost::atomic".
//   peer_* pp [-t P] [-a same|split] [-d MS] | wake-none [-t T] [-d MS]
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#ifdef PEER_BOOST
# include <boost/atomic.hpp>
using word_t = boost::atomic<uint32_t>;
static const char *const label = "boost::atomic";
#else
using word_t = std::atomic<uint32_t>;
static const char *const label = "std::atomic";
#endif

static double now() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

static void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

struct alignas(64) Pair {
  word_t ball{0};          // 0: ping's turn, 1: pong's turn
  unsigned long n = 0;
  double t = 0;
};

static std::atomic<int> stop_flag{0};

static void pass_to(word_t &b, uint32_t t) { b.store(t); b.notify_one(); }
static void await_turn(word_t &b, uint32_t t) {
  uint32_t v;
  while ((v = b.load()) != t) b.wait(v);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s pp|wake-none [-t T] [-a same|split] [-d MS]\n", argv[0]);
    return 2;
  }
  int ms = 200, threads = 1;
  const char *aff = nullptr;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "-d")) ms = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "-t")) threads = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "-a")) aff = argv[i + 1];
    else { std::fprintf(stderr, "%s: unknown option %s\n", argv[0], argv[i]); return 2; }
  }
  if (threads < 1 || ms < 1) return 2;
  int ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
  if (ncpu < 1) ncpu = 1;
  if (aff && std::strcmp(aff, "same") && std::strcmp(aff, "split")) {
    std::fprintf(stderr, "%s: -a same|split\n", argv[0]);
    return 2;
  }
  if (!std::strcmp(argv[1], "pp")) {
    std::vector<Pair> pairs(threads);
    std::atomic<int> go{0};
    std::vector<std::thread> ts;
    double end = 0;
    for (int i = 0; i < threads; i++) {
      int cping = aff && !std::strcmp(aff, "split") ? (2 * i) % ncpu : i % ncpu;
      int cpong = aff && !std::strcmp(aff, "split") ? (2 * i + 1) % ncpu : i % ncpu;
      ts.emplace_back([&, i, cpong] {
        if (aff) pin(cpong);
        while (!go.load()) {}
        for (;;) { await_turn(pairs[i].ball, 1); if (stop_flag.load()) return; pass_to(pairs[i].ball, 0); }
      });
      ts.emplace_back([&, i, cping] {
        if (aff) pin(cping);
        while (!go.load()) {}
        double t0 = now(), t1;
        unsigned long n = 0;
        do {
          for (int k = 0; k < 256; k++) { pass_to(pairs[i].ball, 1); await_turn(pairs[i].ball, 0); }
          n += 256;
        } while ((t1 = now()) < end);
        pairs[i].n = n;
        pairs[i].t = t1 - t0;
      });
    }
    end = now() + ms / 1000.0;
    go.store(1);
    double rate = 0;
    for (int i = 0; i < threads; i++) {
      ts[2 * i + 1].join();
      rate += pairs[i].n / pairs[i].t;
    }
    stop_flag.store(1);
    for (int i = 0; i < threads; i++) {
      pass_to(pairs[i].ball, 1);
      ts[2 * i].join();
    }
    std::printf("workload=pp backend=%s pairs=%d value=%.0f unit=ops_per_s\n", label, threads, rate);
  } else if (!std::strcmp(argv[1], "wake-none")) {
    struct alignas(64) W { word_t w{0}; unsigned long ops = 0; };
    std::vector<W> ws(threads);
    std::atomic<int> go{0};
    std::vector<std::thread> ts;
    double end = 0;
    for (int i = 0; i < threads; i++)
      ts.emplace_back([&, i] {
        while (!go.load()) {}
        unsigned long ops = 0;
        for (;;) {
          ws[i].w.notify_one();
          if ((++ops & 1023) == 0 && now() >= end) break;
        }
        ws[i].ops = ops;
      });
    double t0 = now();
    end = t0 + ms / 1000.0;
    go.store(1);
    unsigned long total = 0;
    for (int i = 0; i < threads; i++) { ts[i].join(); total += ws[i].ops; }
    double t1 = now();
    std::printf("workload=wake-none backend=%s threads=%d value=%.0f unit=ops_per_s\n", label, threads, total / (t1 - t0));
  } else {
    return 2;
  }
  return 0;
}
