// Writing output files so that a reader (or a crash) never sees half a file
// and nothing that is not a regular file is replaced (docs/cudal1-opt.md, -o).
#ifndef CUDAL1_SUPPORT_ATOMICFILE_H
#define CUDAL1_SUPPORT_ATOMICFILE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace cudal1 {

/// Writes `contents` to `path`; "-" means standard output.
/// - a regular file, or none yet: through a temporary file in the same
///   directory and a rename (llvm::writeToOutput), so the file is the old
///   one or the complete new one;
/// - a symlink to a regular file: the file it points to, the same way; the
///   link stays;
/// - a device, a FIFO, or a name under /dev/ or /proc/ (/dev/stdout,
///   /dev/null): written through, never replaced;
/// - a directory or a dangling symlink: an error.
llvm::Error writeFileAtomically(llvm::StringRef path, llvm::StringRef contents);

/// An error when `output` names the same file as `input` (any spelling, a
/// symlink, a hard link); success when either does not exist or is "-".
llvm::Error checkOutputIsNotInput(llvm::StringRef output, llvm::StringRef input);

} // namespace cudal1

#endif
