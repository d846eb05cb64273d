// Inlining the .cu files a unit includes from its own directory, so that
// their kernels are rewritable (include/cudal1/Frontend/IncludedSources.h).
#include "cudal1/Frontend/IncludedSources.h"

#include "clang/Basic/LangOptions.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <map>
#include <set>

using namespace cudal1;

namespace {

/// Deeper than this, inlined files that include further .cu files are left
/// as includes (a chain that long is a cycle or generated code).
constexpr unsigned kMaxDepth = 8;

/// One preprocessing directive of interest, by byte offsets of its line.
struct Directive {
  size_t lineBegin = 0, lineEnd = 0; ///< [begin, end): the line, its '\n' included
  size_t nameBegin = 0, nameEnd = 0; ///< the directive's text after '#', for #pragma once
  unsigned line = 0;
  std::string name; ///< #include "NAME"
  bool pragmaOnce = false;
};

clang::LangOptions lexOptions() {
  clang::LangOptions lo;
  lo.CPlusPlus = lo.CPlusPlus11 = lo.CPlusPlus14 = lo.CPlusPlus17 = true;
  lo.LineComment = true;
  lo.CUDA = true;
  return lo;
}

/// `#include "NAME"` and `#pragma once` directives of `code`, found by the
/// raw lexer (so that comments and string literals are not directives).
std::vector<Directive> directivesOf(llvm::StringRef code) {
  std::vector<Directive> out;
  clang::LangOptions lo = lexOptions();
  // A file location of offset 0; a token's offset is its location's distance from it.
  clang::SourceLocation base = clang::SourceLocation::getFromRawEncoding(1);
  clang::Lexer lex(base, lo, code.begin(), code.begin(), code.end());
  auto offsetOf = [&](const clang::Token &t) {
    return size_t(t.getLocation().getRawEncoding() - base.getRawEncoding());
  };
  auto lineBounds = [&](size_t at, Directive &d) {
    size_t b = code.rfind('\n', at);
    d.lineBegin = b == llvm::StringRef::npos ? 0 : b + 1;
    size_t e = code.find('\n', at);
    d.lineEnd = e == llvm::StringRef::npos ? code.size() : e + 1;
    d.line = 1 + unsigned(code.take_front(d.lineBegin).count('\n'));
  };
  clang::Token tok;
  lex.LexFromRawLexer(tok);
  while (tok.isNot(clang::tok::eof)) {
    if (!tok.is(clang::tok::hash) || !tok.isAtStartOfLine()) {
      lex.LexFromRawLexer(tok);
      continue;
    }
    size_t hashAt = offsetOf(tok);
    clang::Token word, arg;
    lex.LexFromRawLexer(word);
    if (!word.is(clang::tok::raw_identifier) || word.isAtStartOfLine()) {
      tok = word;
      continue;
    }
    llvm::StringRef w = word.getRawIdentifier();
    lex.LexFromRawLexer(arg);
    if (w == "include" && arg.is(clang::tok::string_literal) && !arg.isAtStartOfLine()) {
      llvm::StringRef lit(arg.getLiteralData(), arg.getLength());
      Directive d;
      lineBounds(hashAt, d);
      d.name = lit.drop_front().drop_back().str();
      // Only a line that holds the directive alone (a trailing // comment aside).
      llvm::StringRef rest = code.slice(offsetOf(arg) + arg.getLength(), d.lineEnd).trim();
      if (rest.empty() || rest.starts_with("//"))
        out.push_back(d);
    } else if (w == "pragma" && arg.is(clang::tok::raw_identifier) &&
               arg.getRawIdentifier() == "once" && !arg.isAtStartOfLine()) {
      Directive d;
      lineBounds(hashAt, d);
      d.pragmaOnce = true;
      d.nameBegin = hashAt;
      d.nameEnd = offsetOf(arg) + arg.getLength();
      out.push_back(d);
    }
    tok = arg; // it may start the next directive
  }
  return out;
}

/// Where the preprocessor finds `name` included from `includer`: next to
/// it, named as clang names it ("./k.cu" next to "main.cu").
std::string besides(llvm::StringRef includer, llvm::StringRef name) {
  llvm::StringRef dir = llvm::sys::path::parent_path(includer);
  llvm::SmallString<256> p(dir.empty() ? "." : dir);
  llvm::sys::path::append(p, name);
  return std::string(p);
}

std::string quoted(llvm::StringRef path) {
  std::string out = "\"";
  for (char c : path) {
    if (c == '\\' || c == '"')
      out += '\\';
    out += c;
  }
  return out + "\"";
}

bool isDotCu(llvm::StringRef name) { return name.ends_with(".cu"); }

class Inliner {
public:
  InlinedUnit unit;

  /// `code` of `file` with its .cu includes inlined.
  std::string run(const std::string &file, llvm::StringRef code, unsigned depth, bool isMain) {
    std::vector<Directive> ds = directivesOf(code);
    std::map<std::string, unsigned> count;
    for (const Directive &d : ds)
      if (!d.pragmaOnce)
        ++count[d.name];
    std::string out;
    size_t at = 0;
    for (const Directive &d : ds) {
      if (d.pragmaOnce) {
        // Inlined once into its includer: the pragma has nothing to guard.
        if (isMain)
          continue;
        out += code.slice(at, d.nameBegin).str();
        out += "// #pragma once (cudal1: inlined once)";
        at = d.nameEnd;
        continue;
      }
      if (!isDotCu(d.name))
        continue;
      std::string path = besides(file, d.name);
      auto skip = [&](const std::string &why) { unit.skipped.push_back({path, why}); };
      if (d.name.find_first_of("/\\") != std::string::npos) {
        skip("its name has a directory (only a .cu file next to the file including it is "
             "inlined)");
        continue;
      }
      if (count[d.name] > 1) {
        skip("it is included more than once");
        continue;
      }
      if (depth >= kMaxDepth || seen.count(path)) {
        skip(depth >= kMaxDepth ? "it is included " + std::to_string(kMaxDepth) + " deep"
                                : "it includes itself");
        continue;
      }
      if (!llvm::sys::fs::is_regular_file(path)) {
        skip("it is not next to " + file + " (found elsewhere on the include path, if at all)");
        continue;
      }
      llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buf = llvm::MemoryBuffer::getFile(path);
      if (!buf) {
        skip("it cannot be read: " + buf.getError().message());
        continue;
      }
      seen.insert(path);
      std::string body = run(path, (*buf)->getBuffer(), depth + 1, /*isMain=*/false);
      seen.erase(path);
      if (!body.empty() && body.back() != '\n')
        body += '\n';
      out += code.slice(at, d.lineBegin).str();
      out += "#if __has_include(" + quoted(d.name) + ") /* cudal1: " + d.name +
             " is inlined below; the build still depends on it */\n#endif\n";
      out += "#line 1 " + quoted(path) + "\n";
      out += body;
      out += "#line " + std::to_string(d.line + 1) + " " + quoted(file) + "\n";
      at = d.lineEnd;
      unit.inlined.push_back({path, file, d.line});
    }
    out += code.substr(at).str();
    return out;
  }

private:
  std::set<std::string> seen;
};

} // namespace

InlinedUnit cudal1::inlineIncludedSources(const std::string &file, const std::string &code) {
  Inliner in;
  std::string text = in.run(file, code, 0, /*isMain=*/true);
  in.unit.code = in.unit.inlined.empty() ? code : std::move(text);
  return std::move(in.unit);
}
