// A variant's entry point found in its compiled module by the kernel's name,
// so that the tuner need not parse every variant's source for its mangled
// name: a plan may change the kernel's signature (restrict adds const, which
// changes the mangling) but never its name.
#ifndef CUDAL1_EVAL_ENTRYNAME_H
#define CUDAL1_EVAL_ENTRYNAME_H

#include "cudal1/Eval/Error.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace cudal1 {

/// The names of the function symbols (STT_FUNC) of a 64-bit little-endian
/// ELF image, a cubin's kernels among them. An error when it is not one.
Expected<std::vector<std::string>> elfFunctionNames(const uint8_t *image, size_t size);

/// The part of an Itanium-mangled name that names the function, its scope
/// included: "_Z5scale" of "_Z5scalePfi", "_ZN2ns5scaleE" of
/// "_ZN2ns5scaleEPfi". Empty when the name is not of these two forms (a
/// template's arguments after a nested name, extern "C").
std::string mangledStem(const std::string &mangled);

/// The symbol of `names` that is `entry` or, when the module has no such
/// symbol, the one kernel with entry's stem (mangledStem) whose name shares
/// the longest prefix with it: the same kernel with another signature, or
/// the same instantiation of a template. An error when there is none or
/// the longest prefix is shared by two.
Expected<std::string> matchEntry(const std::vector<std::string> &names, const std::string &entry);

} // namespace cudal1

#endif
