// cooperative_groups for the CPU emulation of test/Passes/persistent-emulated.test:
// a grid barrier over every thread of the emulated cooperative launch
// (Inputs/persistent-emulate.h).
#pragma once
#include <barrier>

inline std::barrier<> *emulatedGridBarrier = nullptr;

namespace cooperative_groups {
struct grid_group {
  void sync() { emulatedGridBarrier->arrive_and_wait(); }
};
inline grid_group this_grid() { return grid_group(); }
} // namespace cooperative_groups
