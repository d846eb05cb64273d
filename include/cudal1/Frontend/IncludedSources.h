// Kernels in included .cu files (issue 18): many projects keep their kernels
// in a .cu that the main file includes (`#include "kernel.cu"`). cudal1 reads
// such a unit with the included file inlined, so its kernels and host code
// are the main file's to analyse and rewrite, and what -o and the plugin
// write is the including unit with the (rewritten) kernels inlined; the
// user's files are never changed.
#ifndef CUDAL1_FRONTEND_INCLUDEDSOURCES_H
#define CUDAL1_FRONTEND_INCLUDEDSOURCES_H

#include <string>
#include <vector>

namespace cudal1 {

/// One included file that was inlined.
struct InlinedSource {
  std::string path;     ///< as the preprocessor names it ("dir/kernel.cu", "./kernel.cu")
  std::string includer; ///< the file whose directive it replaced (the main file, or an inlined one)
  unsigned line = 0;    ///< that directive's line in `includer`
};

/// A `.cu` that a directive names but that stays an include, and why.
struct NotInlined {
  std::string path; ///< as for InlinedSource (when it resolves next to the includer)
  std::string why;
};

struct InlinedUnit {
  std::string code; ///< the unit to parse; `code` unchanged when nothing was inlined
  std::vector<InlinedSource> inlined;
  std::vector<NotInlined> skipped;
};

/// The text of `file` (contents `code`) with every `.cu` file that it
/// includes with `#include "NAME.cu"` from its own directory, exactly once,
/// replaced by that file's contents (and, inside those, the same again, up
/// to 8 deep). Each inlined text is framed by `#line` directives, so that
/// positions, diagnostics and `__FILE__` stay those of the included file,
/// and preceded by `#if __has_include("NAME.cu")` / `#endif`, so that a
/// compile of the result still lists the file among its dependencies
/// (-MD). A `#pragma once` in an inlined file becomes a comment. The
/// resolution of quoted includes is unchanged, since the inlined file
/// lives in the includer's own directory. Directives in comments are not
/// directives (the main file is lexed, not searched); angled includes, a
/// name with a directory, a file included twice, and a file that does not
/// exist next to the includer are left as they are (`skipped`, with the
/// reason, for the .cu names among them).
InlinedUnit inlineIncludedSources(const std::string &file, const std::string &code);

} // namespace cudal1

#endif
