// Reading the legal steps out of the plan driver's JSON listing.
#include "cudal1/Tune/Space.h"
#include "cudal1/Rewrite/Transform.h"

#include "llvm/Support/JSON.h"

#include <map>

namespace cudal1 {

std::string TuneStep::text() const {
  std::string s = scope + ": " + transform;
  if (!params.empty()) {
    s += "(";
    for (size_t i = 0; i < params.size(); ++i)
      s += (i ? ", " : "") + params[i].first + "=" + params[i].second;
    s += ")";
  }
  return s;
}

std::string planText(const std::vector<TuneStep> &steps) {
  std::string s;
  for (size_t i = 0; i < steps.size(); ++i)
    s += (i ? "; " : "") + steps[i].text();
  return s;
}

namespace {
llvm::Error bad(const llvm::Twine &what) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "transform listing: " + what);
}

// Every combination of the offered parameter values.
void expand(const std::string &scope, const llvm::json::Object &t,
            std::vector<TuneStep> &out) {
  TuneStep base;
  base.scope = scope;
  base.transform = t.getString("name").value_or("").str();
  const Transform *tr = findTransform(base.transform);
  base.fastMath = tr && tr->fastMath();
  std::vector<std::pair<std::string, std::vector<std::string>>> space;
  if (const llvm::json::Array *ps = t.getArray("params"))
    for (const llvm::json::Value &p : *ps) {
      const llvm::json::Object *po = p.getAsObject();
      if (!po)
        continue;
      std::vector<std::string> values;
      if (const llvm::json::Array *vs = po->getArray("values"))
        for (const llvm::json::Value &v : *vs)
          if (auto s = v.getAsString())
            values.push_back(s->str());
      if (!values.empty())
        space.push_back({po->getString("name").value_or("").str(), values});
    }
  std::vector<size_t> idx(space.size(), 0);
  while (true) {
    TuneStep s = base;
    for (size_t i = 0; i < space.size(); ++i)
      s.params.push_back({space[i].first, space[i].second[idx[i]]});
    out.push_back(s);
    size_t i = 0;
    for (; i < space.size(); ++i) {
      if (++idx[i] < space[i].second.size())
        break;
      idx[i] = 0;
    }
    if (i == space.size())
      break;
  }
}
/// Every legal transform listed for one kernel, launch, loop or sync.
void expandLegal(const std::string &scope, const llvm::json::Object &item,
                 std::vector<TuneStep> &out) {
  if (const llvm::json::Array *ts = item.getArray("transforms"))
    for (const llvm::json::Value &t : *ts)
      if (const llvm::json::Object *to = t.getAsObject())
        if (to->getBoolean("legal").value_or(false))
          expand(scope, *to, out);
}
} // namespace

llvm::Expected<TuneSpace> parseTuneSpace(llvm::StringRef listJson) {
  llvm::Expected<llvm::json::Value> v = llvm::json::parse(listJson);
  if (!v)
    return v.takeError();
  const llvm::json::Object *root = v->getAsObject();
  if (!root)
    return bad("not an object");
  TuneSpace space;
  space.file = root->getString("file").value_or("").str();
  std::map<std::string, size_t> byName;
  const llvm::json::Array *kernels = root->getArray("kernels");
  const llvm::json::Array *launches = root->getArray("launches");
  if (!kernels || !launches)
    return bad("no 'kernels' or 'launches'");
  for (const llvm::json::Value &kv : *kernels) {
    const llvm::json::Object *k = kv.getAsObject();
    if (!k)
      return bad("a kernel is not an object");
    TuneKernel tk;
    tk.name = k->getString("name").value_or("").str();
    tk.key = k->getString("key").value_or("").str();
    byName.emplace(tk.name, space.kernels.size());
    space.kernels.push_back(tk);
  }
  std::map<std::string, std::vector<const llvm::json::Object *>> launchesOf;
  for (const llvm::json::Value &lv : *launches) {
    const llvm::json::Object *l = lv.getAsObject();
    if (!l)
      return bad("a launch is not an object");
    std::string kernel = l->getString("kernel").value_or("").str();
    auto it = byName.find(kernel);
    if (it == byName.end())
      continue; // a launch of a kernel defined elsewhere
    space.kernels[it->second].launches.push_back(
        unsigned(l->getInteger("id").value_or(0)));
    launchesOf[kernel].push_back(l);
  }
  for (size_t i = 0; i < kernels->size(); ++i) {
    const llvm::json::Object *k = (*kernels)[i].getAsObject();
    TuneKernel &tk = space.kernels[i];
    expandLegal("@" + tk.name, *k, tk.steps);
    const auto &ls = launchesOf[tk.name];
    for (const llvm::json::Object *l : ls) {
      std::string scope = ls.size() == 1
                              ? "@" + tk.name
                              : "@#" + std::to_string(l->getInteger("id").value_or(0));
      expandLegal(scope, *l, tk.steps);
    }
  }
  // Host-side steps (a loop captured as a graph, a dropped synchronization)
  // belong to no kernel: they form one more entry, keyed by the file.
  TuneKernel host;
  host.name = "(host)";
  std::string base = space.file.substr(space.file.rfind('/') + 1);
  host.key = "host:" + base;
  for (const char *kind : {"loops", "syncs"})
    if (const llvm::json::Array *items = root->getArray(kind))
      for (const llvm::json::Value &iv : *items) {
        const llvm::json::Object *item = iv.getAsObject();
        if (!item)
          continue;
        std::string scope = std::string(kind[0] == 'l' ? "@loop#" : "@sync#") +
                            std::to_string(item->getInteger("id").value_or(0));
        expandLegal(scope, *item, host.steps);
      }
  if (!host.steps.empty())
    space.kernels.push_back(host);
  return space;
}

llvm::Expected<TuneSpace> collectTuneSpace(const RewriteInput &in) {
  llvm::Expected<std::string> json = listTransforms(in, /*json=*/true);
  if (!json)
    return json.takeError();
  return parseTuneSpace(*json);
}

} // namespace cudal1
