// Temp file + rename: the destination is either the old file or the new one.
#include "cudal1/Support/AtomicFile.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

Error cudal1::writeFileAtomically(StringRef path, StringRef contents) {
  if (path == "-") {
    outs() << contents;
    outs().flush();
    return Error::success();
  }
  SmallString<256> model(path);
  model += ".tmp-%%%%%%";
  int fd;
  SmallString<256> tmp;
  if (std::error_code ec = sys::fs::createUniqueFile(model, fd, tmp))
    return createStringError(ec, "cannot create a file next to '%s': %s", path.str().c_str(),
                             ec.message().c_str());
  {
    raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << contents;
    os.flush();
    if (os.has_error()) {
      std::error_code ec = os.error();
      os.clear_error();
      sys::fs::remove(tmp);
      return createStringError(ec, "cannot write '%s': %s", tmp.c_str(), ec.message().c_str());
    }
  }
  if (std::error_code ec = sys::fs::rename(tmp, path)) {
    sys::fs::remove(tmp);
    return createStringError(ec, "cannot write '%s': %s", path.str().c_str(),
                             ec.message().c_str());
  }
  return Error::success();
}
