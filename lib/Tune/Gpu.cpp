// Nominal descriptions of GPUs by name, for the strategy's state. The
// figures are datasheet values, enough for a policy to tell GPUs apart;
// measured ceilings (bench/roofline) are what the report's roofline uses.
#include "cudal1/Tune/KernelState.h"

namespace cudal1 {

GpuDescriptor describeGpu(const std::string &name, const std::string &arch) {
  GpuDescriptor d;
  d.name = name;
  d.arch = arch;
  struct Known {
    const char *match;
    int sms;
    double bandwidthGBs, l2Bytes, sharedPerSm;
    int regs, major, minor;
  };
  // Hopper SXM parts: 132 SMs, 228 KB of shared memory and 64 K registers
  // per SM, 50 MB of L2.
  static const Known known[] = {
      {"H200", 132, 4800, 50.0 * 1024 * 1024, 228 * 1024, 65536, 9, 0},
      {"H100", 132, 3350, 50.0 * 1024 * 1024, 228 * 1024, 65536, 9, 0},
  };
  for (const Known &k : known)
    if (name.find(k.match) != std::string::npos) {
      d.smCount = k.sms;
      d.memBandwidthGBs = k.bandwidthGBs;
      d.l2Bytes = k.l2Bytes;
      d.sharedPerSmBytes = k.sharedPerSm;
      d.registersPerSm = k.regs;
      d.computeMajor = k.major;
      d.computeMinor = k.minor;
      break;
    }
  if (d.computeMajor == 0 && arch.size() == 5 && arch.compare(0, 3, "sm_") == 0) {
    d.computeMajor = arch[3] - '0';
    d.computeMinor = arch[4] - '0';
  }
  return d;
}

} // namespace cudal1
