// Writing output files so that a reader (or a crash) never sees half a file.
#ifndef CUDAL1_SUPPORT_ATOMICFILE_H
#define CUDAL1_SUPPORT_ATOMICFILE_H

#include "llvm/Support/Error.h"
#include "llvm/ADT/StringRef.h"

namespace cudal1 {

/// Writes `contents` to `path` through a temporary file in the same
/// directory and a rename; "-" means standard output.
llvm::Error writeFileAtomically(llvm::StringRef path, llvm::StringRef contents);

} // namespace cudal1

#endif
