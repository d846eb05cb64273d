// Output files that cannot lose data: a regular file is replaced atomically
// (llvm::writeToOutput: a temporary file next to it, removed on a signal,
// renamed over it), so a reader or a crash sees the old file or the new one;
// anything else (a device, a FIFO, /dev/stdout) is written through, since
// replacing it by a regular file would destroy it.
#include "cudal1/Support/AtomicFile.h"

#include "llvm/Support/Errc.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace {

Error writeError(StringRef path, std::error_code ec) {
  return createStringError(ec, "cannot write '%s': %s", path.str().c_str(), ec.message().c_str());
}

/// Writes into what `path` already is, without creating or renaming.
Error writeThrough(StringRef path, StringRef contents) {
  std::error_code ec;
  raw_fd_ostream os(path, ec, sys::fs::OF_None);
  if (ec)
    return writeError(path, ec);
  os << contents;
  os.close();
  if (os.has_error()) {
    ec = os.error();
    os.clear_error();
    return writeError(path, ec);
  }
  return Error::success();
}

/// /dev/stdout, /dev/fd/N, /proc/self/fd/N name an open file of this
/// process: replacing what they resolve to would bypass the shell's
/// redirection, so they are always written through.
bool namesAnOpenFile(StringRef path) {
  return path.starts_with("/dev/") || path.starts_with("/proc/");
}

} // namespace

Error cudal1::writeFileAtomically(StringRef path, StringRef contents) {
  if (path == "-") {
    outs() << contents;
    outs().flush();
    return Error::success();
  }
  if (namesAnOpenFile(path))
    return writeThrough(path, contents);
  // 1. What is there decides how to write (status follows symlinks).
  sys::fs::file_status st;
  std::error_code ec = sys::fs::status(path, st, /*follow=*/true);
  SmallString<256> target(path);
  if (ec == errc::no_such_file_or_directory) {
    if (sys::fs::is_symlink_file(path))
      return createStringError(errc::no_such_file_or_directory,
                               "cannot write '%s': it is a symbolic link to a missing file",
                               path.str().c_str());
  } else if (ec) {
    return writeError(path, ec);
  } else if (sys::fs::is_directory(st)) {
    return createStringError(errc::is_a_directory, "cannot write '%s': it is a directory",
                             path.str().c_str());
  } else if (!sys::fs::is_regular_file(st)) {
    return writeThrough(path, contents); // a device or a FIFO
  } else if (sys::fs::is_symlink_file(path)) {
    // 2. A symlink to a regular file: replace the file it points to and keep
    // the link.
    if ((ec = sys::fs::real_path(path, target)))
      return writeError(path, ec);
  }
  // 3. A regular file or a new one: atomically.
  if (Error e = writeToOutput(target, [&](raw_ostream &os) {
        os << contents;
        return Error::success();
      }))
    return createStringError(inconvertibleErrorCode(), "cannot write '%s': %s", path.str().c_str(),
                             toString(std::move(e)).c_str());
  return Error::success();
}

Error cudal1::checkOutputIsNotInput(StringRef output, StringRef input) {
  if (output == "-" || output.empty() || input.empty())
    return Error::success();
  bool same = false;
  // Fails when either does not exist: then they are not the same file.
  if (sys::fs::equivalent(output, input, same) || !same)
    return Error::success();
  return createStringError(errc::invalid_argument,
                           "the output '%s' is the input file; refusing to overwrite it",
                           output.str().c_str());
}
