// What a plan does to a launch's grid and block (cudal1/Eval/LaunchRemap.h):
// the arithmetic of the four launch-changing passes, its text and the
// override a replay uses.
#include "cudal1/Eval/LaunchRemap.h"
#include "cudal1/Capture/CaptureFile.h"
#include "cudal1/Eval/Numbers.h"

#include <algorithm>

namespace cudal1 {

namespace {

constexpr uint64_t kMaxGridX = 2147483647u;
constexpr uint64_t kMaxGridYZ = 65535u;
constexpr uint64_t kMaxThreads = 1024u;

uint64_t ceilDiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

/// "A", "AxB" or "AxBxC" (the trailing 1s left out when printed).
std::string dims(const uint32_t a[3]) {
  std::string s = std::to_string(a[0]);
  int last = a[2] != 1 ? 2 : a[1] != 1 ? 1 : 0;
  for (int d = 1; d <= last; ++d)
    s += "x" + std::to_string(a[d]);
  return s;
}

std::vector<std::string> split(const std::string &s, char sep) {
  std::vector<std::string> out;
  size_t at = 0;
  while (true) {
    size_t end = s.find(sep, at);
    out.push_back(s.substr(at, end == std::string::npos ? std::string::npos : end - at));
    if (end == std::string::npos)
      return out;
    at = end + 1;
  }
}

const char *kSyntax =
    "reshape(BX[xBY[xBZ]]), divide-x(F), lanes(L,K), tiles(T,BY) or block(BX[xBY[xBZ]])";

} // namespace

void LaunchRemapStep::apply(uint64_t grid[3], uint64_t block[3]) const {
  switch (kind) {
  case Kind::Reshape:
    // The same threads in blocks of the new shape: each dimension's grid
    // grows or shrinks to cover what the old grid covered.
    for (int d = 0; d < 3; ++d) {
      grid[d] = ceilDiv(grid[d] * block[d], a[d]);
      block[d] = a[d];
    }
    return;
  case Kind::DivideX:
    // F elements per thread along x.
    grid[0] = ceilDiv(grid[0], a[0]);
    return;
  case Kind::Lanes:
    // What cudal1WarpRowsGrid computes (passes/runtime/warp-rows-host.cuh).
    grid[0] = std::min(ceilDiv(grid[0] * block[0] * a[0], a[1]), kMaxGridX);
    block[0] = a[1];
    block[1] = block[2] = 1;
    return;
  case Kind::Tiles:
    // What stage-shared writes into each launch.
    for (int d = 0; d < 2; ++d)
      grid[d] = ceilDiv(grid[d] * block[d], a[0]);
    grid[2] *= block[2];
    block[0] = a[0];
    block[1] = a[1];
    block[2] = 1;
    return;
  case Kind::Block:
    for (int d = 0; d < 3; ++d)
      block[d] = a[d];
    return;
  }
}

std::string LaunchRemapStep::str() const {
  switch (kind) {
  case Kind::Reshape:
    return "reshape(" + dims(a) + ")";
  case Kind::DivideX:
    return "divide-x(" + std::to_string(a[0]) + ")";
  case Kind::Lanes:
    return "lanes(" + std::to_string(a[0]) + "," + std::to_string(a[1]) + ")";
  case Kind::Tiles:
    return "tiles(" + std::to_string(a[0]) + "," + std::to_string(a[1]) + ")";
  case Kind::Block:
    return "block(" + dims(a) + ")";
  }
  return "";
}

void LaunchRemap::apply(uint64_t grid[3], uint64_t block[3]) const {
  for (const LaunchRemapStep &s : steps)
    s.apply(grid, block);
}

std::string LaunchRemap::str() const {
  std::string s;
  for (const LaunchRemapStep &x : steps)
    s += (s.empty() ? "" : ";") + x.str();
  return s;
}

Expected<LaunchOverride> LaunchRemap::overrideFor(const uint32_t g[3], const uint32_t b[3]) const {
  LaunchOverride o;
  if (empty())
    return o;
  uint64_t grid[3] = {g[0], g[1], g[2]}, block[3] = {b[0], b[1], b[2]};
  apply(grid, block);
  auto shape = [&] {
    return std::to_string(grid[0]) + "x" + std::to_string(grid[1]) + "x" + std::to_string(grid[2]) +
           " blocks of " + std::to_string(block[0]) + "x" + std::to_string(block[1]) + "x" +
           std::to_string(block[2]);
  };
  if (block[0] * block[1] * block[2] > kMaxThreads)
    return makeError("launch remap ", str(), " gives ", shape(), ": more than ", kMaxThreads,
                     " threads per block");
  if (grid[0] > kMaxGridX || grid[1] > kMaxGridYZ || grid[2] > kMaxGridYZ)
    return makeError("launch remap ", str(), " gives ", shape(), ": beyond CUDA's grid limits");
  for (int d = 0; d < 3; ++d) {
    if (!grid[d] || !block[d])
      return makeError("launch remap ", str(), " gives ", shape(), ": an empty dimension");
    o.grid[d] = uint32_t(grid[d]);
    o.block[d] = uint32_t(block[d]);
  }
  o.hasGrid = o.hasBlock = true; // one fixed configuration, both given
  return o;
}

Status LaunchRemap::checkLaunches(const std::vector<CapturedLaunch> &launches) const {
  for (size_t i = 0; i < launches.size(); ++i)
    if (Expected<LaunchOverride> o = overrideFor(launches[i].grid, launches[i].block); !o.ok())
      return makeError("captured launch ", i, ": ", o.error().message());
  return Status::success();
}

Expected<LaunchRemapStep> parseLaunchRemapStep(const std::string &text) {
  size_t open = text.find('(');
  if (open == std::string::npos || text.empty() || text.back() != ')')
    return makeError("launch remap step '", text, "' is not NAME(ARGS): one of ", kSyntax);
  std::string name = text.substr(0, open);
  std::string args = text.substr(open + 1, text.size() - open - 2);
  auto bad = [&](const std::string &why) -> Status {
    return makeError("launch remap step '", text, "': ", why);
  };
  auto numbers = [&](char sep, size_t lo, size_t hi, uint32_t max, uint32_t out[3]) -> Status {
    std::vector<std::string> parts = split(args, sep);
    if (parts.size() < lo || parts.size() > hi)
      return bad(lo != hi ? "takes " + std::to_string(lo) + " to " + std::to_string(hi) + " numbers"
                 : lo == 1 ? std::string("takes one number")
                           : "takes " + std::to_string(lo) + " numbers");
    for (size_t i = 0; i < parts.size(); ++i)
      if (!parseInteger<uint32_t>(parts[i], 1u, max, out[i]))
        return bad("'" + parts[i] + "' is not a number from 1 to " + std::to_string(max));
    return Status::success();
  };
  LaunchRemapStep s;
  if (name == "reshape" || name == "block") {
    s.kind = name == "block" ? LaunchRemapStep::Kind::Block : LaunchRemapStep::Kind::Reshape;
    if (Status st = numbers('x', 1, 3, 1024, s.a); !st.ok())
      return st;
    if (uint64_t(s.a[0]) * s.a[1] * s.a[2] > kMaxThreads)
      return bad("a block of more than 1024 threads");
  } else if (name == "divide-x") {
    s.kind = LaunchRemapStep::Kind::DivideX;
    if (Status st = numbers(',', 1, 1, 1u << 20, s.a); !st.ok())
      return st;
  } else if (name == "lanes") {
    s.kind = LaunchRemapStep::Kind::Lanes;
    if (Status st = numbers(',', 2, 2, 1024, s.a); !st.ok())
      return st;
    if (s.a[0] > 32)
      return bad("more than 32 lanes");
  } else if (name == "tiles") {
    s.kind = LaunchRemapStep::Kind::Tiles;
    if (Status st = numbers(',', 2, 2, 1024, s.a); !st.ok())
      return st;
    if (uint64_t(s.a[0]) * s.a[1] > kMaxThreads)
      return bad("a block of more than 1024 threads");
  } else {
    return makeError("launch remap step '", text, "': unknown step '", name, "' (want ", kSyntax,
                     ")");
  }
  return s;
}

Expected<LaunchRemap> parseLaunchRemap(const std::string &text) {
  LaunchRemap r;
  if (text.empty())
    return r;
  for (const std::string &part : split(text, ';')) {
    Expected<LaunchRemapStep> s = parseLaunchRemapStep(part);
    if (!s.ok())
      return s.error();
    r.steps.push_back(*s);
  }
  return r;
}

} // namespace cudal1
