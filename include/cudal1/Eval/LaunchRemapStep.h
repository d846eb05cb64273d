// One step of a launch remap (cudal1/Eval/LaunchRemap.h describes the steps and
// their text), alone: include/cudal1/Rewrite/Transform.h names it
// (Transform::remapLaunch) without taking the GPU side's error types.
#ifndef CUDAL1_EVAL_LAUNCHREMAPSTEP_H
#define CUDAL1_EVAL_LAUNCHREMAPSTEP_H

#include <cstdint>
#include <string>

namespace cudal1 {

/// One step of a launch remap.
struct LaunchRemapStep {
  enum class Kind { Reshape, DivideX, Lanes, Tiles, Block };
  Kind kind = Kind::Reshape;
  /// Reshape and Block: the block (x, y, z); DivideX: {F}; Lanes: {L, K};
  /// Tiles: {T, BY}.
  uint32_t a[3] = {1, 1, 1};

  static LaunchRemapStep reshape(uint32_t x, uint32_t y = 1, uint32_t z = 1) {
    return {Kind::Reshape, {x, y, z}};
  }
  static LaunchRemapStep divideX(uint32_t factor) { return {Kind::DivideX, {factor, 1, 1}}; }
  static LaunchRemapStep lanes(uint32_t lanes, uint32_t block) {
    return {Kind::Lanes, {lanes, block, 1}};
  }
  static LaunchRemapStep tiles(uint32_t tile, uint32_t blockY) {
    return {Kind::Tiles, {tile, blockY, 1}};
  }
  /// A new block with the grid kept: fewer threads per block, each doing
  /// the work of several of the old ones (tile-shared's register blocking).
  static LaunchRemapStep block(uint32_t x, uint32_t y = 1, uint32_t z = 1) {
    return {Kind::Block, {x, y, z}};
  }

  /// The new grid and block of a launch made with `grid` and `block`.
  void apply(uint64_t grid[3], uint64_t block[3]) const;
  /// The canonical text ("reshape(32x8)", "divide-x(4)", ...).
  std::string str() const;
  bool operator==(const LaunchRemapStep &o) const {
    return kind == o.kind && a[0] == o.a[0] && a[1] == o.a[1] && a[2] == o.a[2];
  }
  bool operator!=(const LaunchRemapStep &o) const { return !(*this == o); }
};

} // namespace cudal1

#endif
