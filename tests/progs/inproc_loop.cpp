// kernels/common.h's timed loop (time_phases) built without CUDA, for bats/cpu_cli.bats: each
// timed iteration asks the library whether it is paused (autograph_resume answers 0 only then,
// and the iteration pauses again) and prints the answers in order ("states:": P paused, o on,
// - without the library), and how many iterations ran.
#include "kernels/common.h"

int main() {
  const LoopFlags loop{20, 2};
  using call = int (*)(void);
  const call resume = (call)dlsym(RTLD_DEFAULT, "autograph_resume");
  const call pause = (call)dlsym(RTLD_DEFAULT, "autograph_pause");
  std::string states;
  long long ran = 0;
  time_phases(
      loop,
      [&](long long g0, long long g1) {
        for (long long g = g0; g < g1; g++, ran++) {
          if (g < loop.warmup) continue;
          char s = '-';
          if (resume && pause) {
            s = 'o';
            if (resume() == 0) {
              pause();
              s = 'P';
            }
          }
          states += s;
        }
      },
      [] {});
  printf("states: %s\nran: %lld\n", states.c_str(), ran);
  return 0;
}
