// peer_atomic.cc - the C++20 peer: std::atomic<uint32_t>::wait/notify_one,
// for pfbench's pp and wake-none workloads, same output format, reported as
// backend "std::atomic".   peer_atomic pp|wake-none [-t T] [-d MS]
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

static double now() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

static std::atomic<uint32_t> ball{0};
static std::atomic<int> stop_flag{0};

static void pass_to(uint32_t t) { ball.store(t); ball.notify_one(); }
static void await_turn(uint32_t t) {
  uint32_t v;
  while ((v = ball.load()) != t) ball.wait(v);
}

int main(int argc, char **argv) {
  if (argc < 2) { std::fprintf(stderr, "usage: peer_atomic pp|wake-none [-t T] [-d MS]\n"); return 2; }
  int ms = 200, threads = 1;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "-d")) ms = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "-t")) threads = std::atoi(argv[i + 1]);
  }
  if (!std::strcmp(argv[1], "pp")) {
    std::atomic<int> ready{0};
    std::thread t([&] {
      ready.store(1);
      for (;;) { await_turn(1); if (stop_flag.load()) return; pass_to(0); }
    });
    while (!ready.load()) {}
    double t0 = now(), end = t0 + ms / 1000.0, t1;
    unsigned long n = 0;
    do {
      for (int i = 0; i < 256; i++) { pass_to(1); await_turn(0); }
      n += 256;
    } while ((t1 = now()) < end);
    stop_flag.store(1); pass_to(1);
    t.join();
    std::printf("workload=pp backend=std::atomic threads=2 value=%.0f unit=ops_per_s\n", n / (t1 - t0));
  } else if (!std::strcmp(argv[1], "wake-none")) {
    struct alignas(64) W { std::atomic<uint32_t> w{0}; unsigned long ops = 0; };
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
    std::printf("workload=wake-none backend=std::atomic threads=%d value=%.0f unit=ops_per_s\n", threads, total / (t1 - t0));
  } else {
    return 2;
  }
  return 0;
}
