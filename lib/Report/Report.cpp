// The HTML tuning report: escaping, a line diff, SVG timing plots, the
// roofline and the page around them. Everything the page shows is written
// here; it references nothing outside itself.
#include "cudal1/Report/Report.h"
#include "cudal1/Support/AtomicFile.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

using namespace llvm;

namespace cudal1 {

namespace {

std::string fmt(const char *spec, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, spec, v);
  return buf;
}

/// Times: four significant digits are more than the measurements carry.
std::string ms(double v) { return fmt("%.4g", v); }
std::string speedupText(double s) { return fmt("%.3f", s) + "x"; }
std::string intervalText(double s, double lo, double hi) {
  return speedupText(s) + " [" + fmt("%.3f", lo) + ", " + fmt("%.3f", hi) + "]";
}
std::string percent(double f) { return fmt("%.1f", 100 * f) + "%"; }

// --- diff ------------------------------------------------------------------

std::vector<StringRef> splitLines(StringRef text) {
  std::vector<StringRef> lines;
  while (!text.empty()) {
    auto [line, rest] = text.split('\n');
    lines.push_back(line);
    text = rest;
  }
  return lines;
}

enum class Op : char { Keep = ' ', Del = '-', Add = '+' };

/// Myers' O((N+M)D) shortest edit script on lines, after the common prefix
/// and suffix are taken off (rewrites are local, so D stays small). The
/// trace keeps one copy of V per step; past kMaxTrace integers the middle is
/// reported as replaced wholesale rather than using unbounded memory.
std::vector<Op> diffLines(const std::vector<StringRef> &a, const std::vector<StringRef> &b) {
  size_t pre = 0;
  while (pre < a.size() && pre < b.size() && a[pre] == b[pre])
    ++pre;
  size_t suf = 0;
  while (suf < a.size() - pre && suf < b.size() - pre &&
         a[a.size() - 1 - suf] == b[b.size() - 1 - suf])
    ++suf;
  long n = long(a.size() - pre - suf), m = long(b.size() - pre - suf);
  auto A = [&](long i) { return a[pre + size_t(i)]; };
  auto B = [&](long j) { return b[pre + size_t(j)]; };

  std::vector<Op> middle;
  long max = n + m, off = max + 1;
  constexpr size_t kMaxTrace = size_t(1) << 22; // 32 MiB of trace
  std::vector<std::vector<long>> trace;
  std::vector<long> v(size_t(2 * max + 3), 0);
  bool found = max == 0;
  long dEnd = 0;
  for (long d = 0; d <= max && !found; ++d) {
    if ((size_t(d) + 1) * v.size() > kMaxTrace)
      break;
    trace.push_back(v);
    for (long k = -d; k <= d; k += 2) {
      long x = (k == -d || (k != d && v[off + k - 1] < v[off + k + 1])) ? v[off + k + 1]
                                                                        : v[off + k - 1] + 1;
      long y = x - k;
      while (x < n && y < m && A(x) == B(y))
        ++x, ++y;
      v[off + k] = x;
      if (x >= n && y >= m) {
        found = true;
        dEnd = d;
        break;
      }
    }
  }
  if (!found) {
    middle.assign(size_t(n), Op::Del);
    middle.insert(middle.end(), size_t(m), Op::Add);
  } else if (max > 0) {
    long x = n, y = m;
    for (long d = dEnd; d > 0; --d) {
      const std::vector<long> &pv = trace[size_t(d)];
      long k = x - y;
      long prevK = (k == -d || (k != d && pv[off + k - 1] < pv[off + k + 1])) ? k + 1 : k - 1;
      long prevX = pv[off + prevK], prevY = prevX - prevK;
      while (x > prevX && y > prevY) {
        middle.push_back(Op::Keep);
        --x, --y;
      }
      middle.push_back(x == prevX ? Op::Add : Op::Del);
      x = prevX;
      y = prevY;
    }
    while (x > 0 && y > 0) {
      middle.push_back(Op::Keep);
      --x, --y;
    }
    std::reverse(middle.begin(), middle.end());
  }
  std::vector<Op> ops(pre, Op::Keep);
  ops.insert(ops.end(), middle.begin(), middle.end());
  ops.insert(ops.end(), suf, Op::Keep);
  return ops;
}

std::string hunkRange(size_t start, size_t count) {
  // The unified format names the line before an empty range.
  return std::to_string(count == 0 ? start : start + 1) + "," + std::to_string(count);
}

// --- plots -----------------------------------------------------------------

double quantile(const std::vector<double> &sorted, double q) {
  if (sorted.empty())
    return 0;
  double pos = q * double(sorted.size() - 1);
  size_t i = size_t(pos);
  double f = pos - double(i);
  return i + 1 < sorted.size() ? sorted[i] * (1 - f) + sorted[i + 1] * f : sorted[i];
}

double niceStep(double span, int ticks) {
  double raw = span / ticks;
  double mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (raw <= m * mag)
      return m * mag;
  return 10 * mag;
}

const char *colorOf(PlotRow::Kind k) {
  switch (k) {
  case PlotRow::Original:
    return "#6b7280";
  case PlotRow::Faster:
    return "#15803d";
  case PlotRow::Slower:
    return "#b91c1c";
  case PlotRow::Neutral:
    break;
  }
  return "#2563eb";
}

std::string shorten(StringRef s, size_t n) {
  if (s.size() <= n)
    return s.str();
  return s.take_front(n - 1).str() + "\u2026";
}

// --- page ------------------------------------------------------------------

const char *kStyle = R"css(
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;background:#f6f7f9;color:#1f2937;line-height:1.45}
main{max-width:1120px;margin:0 auto;padding:24px}
h1{font-size:1.6em;margin:0 0 4px}h2{font-size:1.25em;margin:0 0 8px}h3{font-size:1.05em;margin:16px 0 6px}
section{background:#fff;border:1px solid #e5e7eb;border-radius:8px;padding:16px 20px;margin:16px 0}
table{border-collapse:collapse;width:100%;font-size:.9em}
th,td{text-align:left;padding:4px 8px;border-bottom:1px solid #eef0f3;vertical-align:top}
th{background:#f9fafb;font-weight:600}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.88em}
.plan{word-break:break-word}
.meta td:first-child{color:#6b7280;width:190px}
.badge{display:inline-block;padding:1px 8px;border-radius:10px;font-size:.82em;font-weight:600}
.ok{background:#dcfce7;color:#166534}.bad{background:#fee2e2;color:#991b1b}.neutral{background:#e0e7ff;color:#3730a3}.na{background:#f3f4f6;color:#4b5563}
.big{font-size:1.35em;font-weight:700}
.note{color:#6b7280;font-size:.88em}
pre.diff{background:#fbfbfc;border:1px solid #e5e7eb;border-radius:6px;padding:8px 0;overflow-x:auto;line-height:1.35}
pre.diff span{display:block;padding:0 12px;white-space:pre}
pre.diff .add{background:#e6ffec}pre.diff .del{background:#ffebe9}pre.diff .hunk{background:#eef2ff;color:#4338ca}pre.diff .file{color:#6b7280;font-weight:600}
svg.cudal1-plot{display:block;max-width:100%;height:auto;margin:8px 0}
svg.cudal1-plot text{font-family:system-ui,sans-serif;font-size:12px;fill:#374151}
#selfcheck{font-size:.85em}
)css";

/// The page checks itself in the browser: it counts the kernel sections,
/// plots and samples the generator promised (data-* on <main>) and whether
/// each plot has a size on screen, and writes the verdict into #selfcheck.
const char *kSelfCheck = R"js(
(function(){
var m=document.querySelector('main'),e=document.getElementById('selfcheck');
var ks=document.querySelectorAll('section.kernel').length;
var ps=document.querySelectorAll('svg.cudal1-plot'),drawn=0,pts=0;
for(var i=0;i<ps.length;i++){var r=ps[i].getBoundingClientRect();if(r.width>0&&r.height>0)drawn++;pts+=ps[i].querySelectorAll('circle.sample').length;}
var ok=ks==+m.dataset.kernels&&ps.length==+m.dataset.plots&&drawn==ps.length&&pts==+m.dataset.samples;
e.textContent='selfcheck: '+(ok?'ok':'FAILED')+' ('+ks+'/'+m.dataset.kernels+' kernel sections, '+ps.length+'/'+m.dataset.plots+' plots, '+drawn+' rendered, '+pts+'/'+m.dataset.samples+' samples)';
e.className='badge '+(ok?'ok':'bad');
})();
)js";

std::string outcomeBadge(const Measurement &v) {
  std::string name = outcomeName(v.outcome);
  if (v.outcome == Outcome::Ok && v.faster)
    return "<span class=\"badge ok\">faster</span>";
  if (v.outcome == Outcome::Ok)
    return "<span class=\"badge neutral\">ok</span>";
  if (v.outcome == Outcome::Refused || v.outcome == Outcome::NotRun)
    return "<span class=\"badge na\">" + htmlEscape(name) + "</span>";
  return "<span class=\"badge bad\">" + htmlEscape(name) + "</span>";
}

double medianOf(std::vector<double> v) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  return quantile(v, 0.5);
}

struct PageState {
  const ReportData &d;
  RooflineFloor roof;
  bool roofUsable = false;
  std::string roofWhy;
  unsigned plots = 0, samples = 0;

  std::string fraction(double timeMs) const {
    if (!roofUsable || timeMs <= 0)
      return "n/a";
    return percent(roof.floorMs / timeMs);
  }
};

std::string timingPlotFor(PageState &st, const ReportKernel &k) {
  std::vector<PlotRow> rows;
  std::set<unsigned> batches;
  for (const ReportVariant &v : k.variants)
    if (v.measured.timed)
      batches.insert(v.batch);
  if (batches.empty())
    return "";
  PlotRow orig;
  orig.label = "original";
  orig.kind = PlotRow::Original;
  std::vector<double> origTimes;
  for (const ReportBaseline &b : st.d.baselines)
    if (batches.count(b.batch)) {
      append_range(orig.samplesMs, b.samplesMs);
      origTimes.push_back(b.timeMs);
    }
  orig.medianMs = medianOf(origTimes);
  orig.note = batches.size() == 1 ? "baseline"
                                  : "baseline (" + std::to_string(batches.size()) + " evaluations)";
  rows.push_back(orig);
  for (const ReportVariant &rv : k.variants) {
    const Measurement &v = rv.measured;
    if (!v.timed)
      continue;
    PlotRow r;
    r.label = rv.id + "  " + rv.plan;
    r.samplesMs = v.samplesMs;
    r.medianMs = v.timeMs;
    r.note = intervalText(v.speedup, v.lo, v.hi);
    r.kind = v.faster ? PlotRow::Faster : (v.hi < 1.0 ? PlotRow::Slower : PlotRow::Neutral);
    rows.push_back(r);
  }
  for (const PlotRow &r : rows) // the plot draws the finite ones
    st.samples += unsigned(llvm::count_if(r.samplesMs, [](double v) { return std::isfinite(v); }));
  ++st.plots;
  return renderTimingPlot(rows, "Time per run of each verified variant, "
                                "kernel " +
                                    k.name);
}

void variantTable(std::string &o, const PageState &st,
                  const std::vector<const ReportVariant *> &vs) {
  o += "<table><thead><tr><th>id</th><th>plan</th><th>outcome</th><th>judge</th>"
       "<th class=\"num\">time (ms)</th><th class=\"num\">speedup [95% "
       "interval]</th><th class=\"num\">samples</th><th "
       "class=\"num\">roofline</th><th>detail</th></tr></thead><tbody>\n";
  for (const ReportVariant *rv : vs) {
    const Measurement *v = &rv->measured;
    o += "<tr><td><code>" + htmlEscape(rv->id) + "</code></td><td class=\"plan\"><code>" +
         htmlEscape(rv->plan) + "</code></td><td>" + outcomeBadge(*v) + "</td><td>" +
         htmlEscape(judgeName(v->judge)) + "</td>";
    if (v->timed)
      o += "<td class=\"num\">" + ms(v->timeMs) + "</td><td class=\"num\">" +
           intervalText(v->speedup, v->lo, v->hi) + "</td><td class=\"num\">" +
           std::to_string(v->samplesMs.size()) + "</td><td class=\"num\">" +
           st.fraction(v->timeMs) + "</td>";
    else
      o += "<td class=\"num\">-</td><td class=\"num\">-</td><td "
           "class=\"num\">-</td><td class=\"num\">-</td>";
    o += "<td class=\"note\">" + htmlEscape(shorten(rv->detail(), 240)) + "</td></tr>\n";
  }
  o += "</tbody></table>\n";
}

void diffBlock(std::string &o, StringRef diff) {
  o += "<pre class=\"diff\">";
  for (StringRef line : splitLines(diff)) {
    const char *cls = "ctx";
    if (line.starts_with("+++") || line.starts_with("---"))
      cls = "file";
    else if (line.starts_with("@@"))
      cls = "hunk";
    else if (line.starts_with("+"))
      cls = "add";
    else if (line.starts_with("-"))
      cls = "del";
    o += "<span class=\"";
    o += cls;
    o += "\">" + htmlEscape(line) + "</span>";
  }
  o += "</pre>\n";
}

} // namespace

std::string htmlEscape(StringRef text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    case '\'':
      out += "&#39;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

std::string unifiedDiff(StringRef before, StringRef after, StringRef beforeName,
                        StringRef afterName, unsigned context) {
  std::vector<StringRef> a = splitLines(before), b = splitLines(after);
  std::vector<Op> ops = diffLines(a, b);
  if (llvm::all_of(ops, [](Op op) { return op == Op::Keep; }))
    return "";
  std::string out = "--- " + beforeName.str() + "\n+++ " + afterName.str() + "\n";
  // Positions in a and b before each op.
  std::vector<size_t> ia(ops.size() + 1), ib(ops.size() + 1);
  for (size_t i = 0; i < ops.size(); ++i) {
    ia[i + 1] = ia[i] + (ops[i] != Op::Add);
    ib[i + 1] = ib[i] + (ops[i] != Op::Del);
  }
  size_t i = 0;
  while (i < ops.size()) {
    if (ops[i] == Op::Keep) {
      ++i;
      continue;
    }
    // A hunk: from `context` lines before this change to `context` lines
    // after the last change that is at most 2*context kept lines away.
    size_t start = i >= context ? i - context : 0;
    size_t end = i;
    while (true) {
      while (end < ops.size() && ops[end] != Op::Keep)
        ++end;
      size_t next = end;
      while (next < ops.size() && ops[next] == Op::Keep)
        ++next;
      if (next < ops.size() && next - end <= 2 * context) {
        end = next;
        continue;
      }
      end = std::min(ops.size(), end + context);
      break;
    }
    out += "@@ -" + hunkRange(ia[start], ia[end] - ia[start]) + " +" +
           hunkRange(ib[start], ib[end] - ib[start]) + " @@\n";
    for (size_t j = start; j < end; ++j) {
      StringRef line = ops[j] == Op::Add ? b[ib[j]] : a[ia[j]];
      out += char(ops[j]);
      out += line.str() + "\n";
    }
    i = end;
  }
  return out;
}

RooflineFloor computeRooflineFloor(const ProgramFloor &floor, const RooflineCeilings &c) {
  RooflineFloor r;
  if (!floor.known) {
    r.why = "the program prints no 'floor: bytes=B flops=F dtype=D' line";
    return r;
  }
  if (c.bandwidthGBs <= 0) {
    r.why = "no memory bandwidth ceiling";
    return r;
  }
  double mem = floor.bytes / (c.bandwidthGBs * 1e9) * 1e3;
  double rate = floor.dtype == "f32" ? c.f32Gflops : floor.dtype == "f64" ? c.f64Gflops : 0;
  double comp = rate > 0 ? floor.flops / (rate * 1e9) * 1e3 : 0;
  r.known = true;
  r.floorMs = std::max(mem, comp);
  r.bound = mem >= comp ? "memory" : "compute";
  return r;
}

std::optional<RooflineCeilings> nominalCeilings(StringRef gpu) {
  // NVIDIA's datasheets: memory bandwidth, FP32 (CUDA cores) and FP64 Tensor
  // Core peaks (bench/run uses cuBLAS DGEMM, which runs on the FP64 tensor
  // cores). docs/Report.md names the sources.
  RooflineCeilings c;
  if (gpu == "NVIDIA H200") {
    c = {4800, 67000, 67000, ""};
    c.source = "nominal NVIDIA H200 SXM datasheet figures (4.8 TB/s, FP32 "
               "67 TFLOP/s, FP64 Tensor Core 67 TFLOP/s)";
  } else if (gpu == "NVIDIA H100 80GB HBM3") {
    c = {3350, 67000, 67000, ""};
    c.source = "nominal NVIDIA H100 SXM datasheet figures (3.35 TB/s, FP32 "
               "67 TFLOP/s, FP64 Tensor Core 67 TFLOP/s)";
  } else if (gpu == "NVIDIA H100 PCIe") {
    c = {2000, 51000, 51000, ""};
    c.source = "nominal NVIDIA H100 PCIe datasheet figures (2 TB/s, FP32 "
               "51 TFLOP/s, FP64 Tensor Core 51 TFLOP/s)";
  } else {
    return std::nullopt;
  }
  c.source += "; measured ceilings are lower (4261 GB/s on the project's "
              "H200), so this fraction understates what bench/run reports";
  return c;
}

Expected<RooflineCeilings> parseCeilings(StringRef text, StringRef name) {
  for (StringRef line : splitLines(text)) {
    SmallVector<StringRef, 8> words;
    line.split(words, ' ', -1, false);
    RooflineCeilings c;
    unsigned seen = 0;
    for (StringRef w : words) {
      auto [k, v] = w.split('=');
      double d;
      if (v.getAsDouble(d) || !(d > 0))
        continue;
      if (k == "bw_gbs")
        c.bandwidthGBs = d, seen |= 1;
      else if (k == "sgemm_gflops")
        c.f32Gflops = d, seen |= 2;
      else if (k == "dgemm_gflops")
        c.f64Gflops = d, seen |= 4;
    }
    if (seen == 7) {
      c.source = "measured ceilings from " + name.str() + " (" + fmt("%.1f", c.bandwidthGBs) +
                 " GB/s, SGEMM " + fmt("%.0f", c.f32Gflops) + " GFLOP/s, DGEMM " +
                 fmt("%.0f", c.f64Gflops) + " GFLOP/s)";
      return c;
    }
  }
  return createStringError(inconvertibleErrorCode(),
                           "%s: no 'bw_gbs=X sgemm_gflops=Y dgemm_gflops=Z' "
                           "line (the output of bench/roofline/ceilings)",
                           name.str().c_str());
}

std::string renderTimingPlot(const std::vector<PlotRow> &rows, StringRef title) {
  const double width = 980, left = 300, right = 190, top = 28, rowH = 30, bottom = 40;
  const double plotW = width - left - right;
  const double height = top + rowH * double(rows.size()) + bottom;

  double lo = INFINITY, hi = -INFINITY;
  for (const PlotRow &r : rows) {
    for (double s : r.samplesMs)
      if (std::isfinite(s))
        lo = std::min(lo, s), hi = std::max(hi, s);
    if (r.samplesMs.empty() && r.medianMs > 0)
      lo = std::min(lo, r.medianMs), hi = std::max(hi, r.medianMs);
  }
  if (!std::isfinite(lo)) {
    lo = 0;
    hi = 1;
  }
  if (hi - lo < 1e-12 * std::max(1.0, std::fabs(hi))) {
    double pad = std::max(std::fabs(hi) * 0.05, 1e-6);
    lo -= pad;
    hi += pad;
  }
  double step = niceStep(hi - lo, 5);
  double axisLo = std::floor(lo / step) * step;
  double axisHi = std::ceil(hi / step) * step;
  if (axisLo < 0 && lo >= 0)
    axisLo = 0;
  auto X = [&](double t) { return left + (t - axisLo) / (axisHi - axisLo) * plotW; };

  std::string o;
  o += "<svg class=\"cudal1-plot\" viewBox=\"0 0 " + fmt("%.0f", width) + " " +
       fmt("%.0f", height) + "\" width=\"" + fmt("%.0f", width) + "\" height=\"" +
       fmt("%.0f", height) + "\" role=\"img\" aria-label=\"" + htmlEscape(title) + "\">\n";
  o += "<title>" + htmlEscape(title) + "</title>\n";
  o += "<text x=\"" + fmt("%.0f", left) + "\" y=\"16\" font-weight=\"600\">" + htmlEscape(title) +
       "</text>\n";
  // Grid and axis.
  double axisY = top + rowH * double(rows.size());
  for (double t = axisLo; t <= axisHi + step / 2; t += step) {
    double x = X(t);
    o += "<line x1=\"" + fmt("%.1f", x) + "\" y1=\"" + fmt("%.1f", top) + "\" x2=\"" +
         fmt("%.1f", x) + "\" y2=\"" + fmt("%.1f", axisY) + "\" stroke=\"#e5e7eb\"/>\n";
    o += "<text x=\"" + fmt("%.1f", x) + "\" y=\"" + fmt("%.1f", axisY + 16) +
         "\" text-anchor=\"middle\">" + fmt("%.6g", t) + "</text>\n";
  }
  o += "<line x1=\"" + fmt("%.1f", left) + "\" y1=\"" + fmt("%.1f", axisY) + "\" x2=\"" +
       fmt("%.1f", left + plotW) + "\" y2=\"" + fmt("%.1f", axisY) + "\" stroke=\"#9ca3af\"/>\n";
  o += "<text x=\"" + fmt("%.1f", left + plotW / 2) + "\" y=\"" + fmt("%.1f", axisY + 34) +
       "\" text-anchor=\"middle\">time per run (ms)</text>\n";

  for (size_t i = 0; i < rows.size(); ++i) {
    const PlotRow &r = rows[i];
    const char *color = colorOf(r.kind);
    double y0 = top + rowH * double(i), cy = y0 + rowH / 2;
    std::vector<double> s;
    for (double v : r.samplesMs)
      if (std::isfinite(v))
        s.push_back(v);
    std::sort(s.begin(), s.end());
    double med = s.empty() ? r.medianMs : quantile(s, 0.5);
    o += "<g class=\"row\"><title>" + htmlEscape(r.label) + ": " +
         (s.empty() ? std::string("no samples recorded, median ")
                    : std::to_string(s.size()) + " samples, median ") +
         ms(med) + " ms</title>\n";
    if (i % 2)
      o += "<rect x=\"0\" y=\"" + fmt("%.1f", y0) + "\" width=\"" + fmt("%.0f", width) +
           "\" height=\"" + fmt("%.0f", rowH) + "\" fill=\"#f9fafb\"/>\n";
    o += "<text x=\"" + fmt("%.0f", left - 10) + "\" y=\"" + fmt("%.1f", cy + 4) +
         "\" text-anchor=\"end\">" + htmlEscape(shorten(r.label, 44)) + "</text>\n";
    if (!s.empty()) {
      double q1 = quantile(s, 0.25), q3 = quantile(s, 0.75);
      o += "<line x1=\"" + fmt("%.1f", X(s.front())) + "\" y1=\"" + fmt("%.1f", cy) + "\" x2=\"" +
           fmt("%.1f", X(s.back())) + "\" y2=\"" + fmt("%.1f", cy) + "\" stroke=\"" + color +
           "\" stroke-opacity=\"0.5\"/>\n";
      o += "<rect class=\"box\" x=\"" + fmt("%.1f", X(q1)) + "\" y=\"" + fmt("%.1f", cy - 8) +
           "\" width=\"" + fmt("%.1f", std::max(1.0, X(q3) - X(q1))) + "\" height=\"16\" fill=\"" +
           color + "\" fill-opacity=\"0.15\" stroke=\"" + color + "\"/>\n";
      for (size_t j = 0; j < r.samplesMs.size(); ++j) {
        double v = r.samplesMs[j];
        if (!std::isfinite(v))
          continue;
        // A fixed jitter so that equal times stay visible as several dots.
        double jy = double(int((j * 7) % 9) - 4) * 1.6;
        o += "<circle class=\"sample\" cx=\"" + fmt("%.1f", X(v)) + "\" cy=\"" +
             fmt("%.1f", cy + jy) + "\" r=\"2.6\" fill=\"" + color + "\" fill-opacity=\"0.75\"/>\n";
      }
    }
    if (med > 0)
      o += "<line class=\"median\" x1=\"" + fmt("%.1f", X(med)) + "\" y1=\"" +
           fmt("%.1f", cy - 10) + "\" x2=\"" + fmt("%.1f", X(med)) + "\" y2=\"" +
           fmt("%.1f", cy + 10) + "\" stroke=\"" + color + "\" stroke-width=\"2.5\"/>\n";
    std::string note = r.note;
    if (s.empty())
      note += note.empty() ? "no samples recorded" : " (no samples)";
    o += "<text x=\"" + fmt("%.0f", left + plotW + 10) + "\" y=\"" + fmt("%.1f", cy + 4) +
         "\" fill=\"" + color + "\">" + htmlEscape(note) + "</text>\n";
    o += "</g>\n";
  }
  o += "</svg>\n";
  return o;
}

std::string renderReport(const ReportData &d) {
  PageState st{d, {}, false, ""};
  // 1. The roofline: usable only with the program's floor, ceilings, and
  // times of the same GPU region the floor describes.
  if (!d.floor.known)
    st.roofWhy = "the program prints no roofline floor (a line 'floor: "
                 "bytes=B flops=F dtype=D', see bench/corpus/common.h "
                 "printFloor)";
  else if (!d.programTimes)
    st.roofWhy = "the times are whole-process wall times (no --time-regex), "
                 "which the floor of the program's GPU region cannot be "
                 "compared with";
  else if (!d.ceilings)
    st.roofWhy = d.ceilingsNote.empty() ? "no ceilings for this GPU" : d.ceilingsNote;
  else {
    st.roof = computeRooflineFloor(d.floor, *d.ceilings);
    st.roofUsable = st.roof.known;
    if (!st.roof.known)
      st.roofWhy = st.roof.why;
  }
  std::vector<double> baseTimes;
  for (const ReportBaseline &b : d.baselines)
    baseTimes.push_back(b.timeMs);
  double originalMs = medianOf(baseTimes);

  // 2. The body first (the plot counts go into <main>'s attributes).
  std::string body;
  std::string name = htmlEscape(d.sourceFile);
  body += "<header><h1>cudal1 tuning report: <code>" + name +
          "</code></h1><p class=\"note\">Generated by cudal1-opt " + htmlEscape(d.mode) +
          ". Self-contained: nothing on this page is "
          "loaded from elsewhere.</p></header>\n";

  // Summary.
  body += "<section id=\"summary\"><h2>Summary</h2>\n";
  if (d.finalPlan.empty())
    body += "<p><span class=\"badge na\">original kept</span> No variant was "
            "verified and faster (95% interval above 1 and at least "
            "1.01x).</p>\n";
  else
    body += "<p><span class=\"big\">" + intervalText(d.finalSpeedup, d.finalLo, d.finalHi) +
            "</span> whole program with <code class=\"plan\">" + htmlEscape(d.finalPlan) +
            "</code></p>\n";
  body += "<table class=\"meta\"><tbody>\n";
  auto meta = [&](StringRef k, const std::string &v) {
    body += "<tr><td>" + htmlEscape(k) + "</td><td>" + v + "</td></tr>\n";
  };
  meta("source", "<code>" + name + "</code>");
  meta("output", "<code>" + htmlEscape(d.outputFile) + "</code>");
  meta("GPU", htmlEscape(d.gpu.empty() ? "unknown" : d.gpu));
  meta("date", htmlEscape(d.date));
  meta("times", htmlEscape(d.timeSource));
  if (originalMs > 0)
    meta("original", ms(originalMs) + " ms (median over " + std::to_string(d.baselines.size()) +
                         " evaluation(s))");
  if (st.roofUsable)
    meta("roofline fraction",
         st.fraction(originalMs) + " original &rarr; " +
             (d.finalPlan.empty() ? st.fraction(originalMs) : st.fraction(d.finalMs)) +
             " tuned (floor " + ms(st.roof.floorMs) + " ms, " + htmlEscape(st.roof.bound) +
             "-bound)");
  else
    meta("roofline fraction", "n/a: " + htmlEscape(st.roofWhy));
  body += "</tbody></table>\n";
  body += "<h3>Kernels</h3><table><thead><tr><th>kernel</th><th "
          "class=\"num\">tried</th><th class=\"num\">correct</th><th "
          "class=\"num\">speedup [95% interval]</th><th>best "
          "plan</th></tr></thead><tbody>\n";
  for (const ReportKernel &k : d.kernels)
    body += "<tr><td><a href=\"#k-" + htmlEscape(k.name) + "\"><code>" + htmlEscape(k.name) +
            "</code></a></td><td class=\"num\">" + std::to_string(k.tried) +
            "</td><td class=\"num\">" + std::to_string(k.correct) + "</td><td class=\"num\">" +
            (k.bestPlan.empty() ? "-" : intervalText(k.speedup, k.lo, k.hi)) +
            "</td><td class=\"plan\">" +
            (k.bestPlan.empty() ? "<span class=\"note\">(original "
                                  "kept)</span>"
                                : "<code>" + htmlEscape(k.bestPlan) + "</code>") +
            "</td></tr>\n";
  body += "</tbody></table>\n<p class=\"note\">Speedups are of the whole "
          "program's measured time with the plan applied, against the "
          "original timed in the same evaluation; the interval is a paired "
          "bootstrap over interleaved rounds.</p></section>\n";

  // Per kernel.
  for (const ReportKernel &k : d.kernels) {
    body += "<section class=\"kernel\" id=\"k-" + htmlEscape(k.name) + "\"><h2>Kernel <code>" +
            htmlEscape(k.name) + "</code></h2>\n";
    body += "<p class=\"note\">key <code>" + htmlEscape(k.key) + "</code>; " +
            std::to_string(k.tried) + " variant(s) evaluated, " + std::to_string(k.correct) +
            " verified</p>\n";
    const ReportVariant *best = nullptr;
    for (const ReportVariant &v : k.variants)
      if (!k.bestPlan.empty() && v.plan == k.bestPlan && v.measured.timed)
        best = &v;
    if (k.bestPlan.empty())
      body += "<p><span class=\"badge na\">original kept</span> no variant "
              "of this kernel was verified and faster.</p>\n";
    else
      body += "<p>best plan <code class=\"plan\">" + htmlEscape(k.bestPlan) +
              "</code>: <span class=\"big\">" + intervalText(k.speedup, k.lo, k.hi) + "</span>" +
              (best && st.roofUsable ? "; roofline fraction " + st.fraction(best->measured.timeMs)
                                     : std::string()) +
              "</p>\n";
    std::string plot = timingPlotFor(st, k);
    if (plot.empty())
      body += "<p class=\"note\">No variant of this kernel was timed, so "
              "there is nothing to plot.</p>\n";
    else
      body += plot + "<p class=\"note\">Each dot is one timed run (one "
                     "interleaved round); boxes span the quartiles, the "
                     "thick tick is the median. Gray: the original; green: "
                     "faster; red: slower; blue: neither.</p>\n";
    std::vector<const ReportVariant *> vs;
    for (const ReportVariant &v : k.variants)
      vs.push_back(&v);
    variantTable(body, st, vs);
    body += "</section>\n";
  }

  if (d.combination) {
    body += "<section id=\"combination\"><h2>The kernels' best plans "
            "together</h2>\n";
    variantTable(body, st, {&*d.combination});
    body += "<p class=\"note\">Used only when verified and surer (higher "
            "lower bound) than the best single plan.</p></section>\n";
  }

  // Roofline.
  body += "<section id=\"roofline\"><h2>Roofline</h2>\n";
  if (st.roofUsable) {
    body += "<p>floor " + ms(st.roof.floorMs) + " ms (" + htmlEscape(st.roof.bound) +
            "-bound) from the program's " + fmt("%.4g", d.floor.bytes) + " bytes and " +
            fmt("%.4g", d.floor.flops) + " operations (" + htmlEscape(d.floor.dtype) +
            ") against " + htmlEscape(d.ceilings->source) +
            ". Fraction = floor / measured time.</p>\n";
  } else {
    body += "<p><span class=\"badge na\">n/a</span> " + htmlEscape(st.roofWhy) + ".</p>\n";
    if (d.floor.known)
      body += "<p class=\"note\">The program's floor: " + fmt("%.4g", d.floor.bytes) + " bytes, " +
              fmt("%.4g", d.floor.flops) + " operations (" + htmlEscape(d.floor.dtype) + ").</p>\n";
  }
  body += "</section>\n";

  // Diff.
  body += "<section id=\"diff\"><h2>Source diff</h2>\n";
  std::string diff = unifiedDiff(
      d.originalSource, d.tunedSource, d.sourceFile + " (original)",
      (d.outputFile == "-" ? std::string("standard output") : d.outputFile) + " (tuned)");
  if (diff.empty())
    body += "<p class=\"note\">The output is the original, unchanged.</p>\n";
  else
    diffBlock(body, diff);
  body += "</section>\n";
  body += "<footer><p class=\"note\"><span id=\"selfcheck\" class=\"badge "
          "na\">selfcheck: not run (scripts disabled)</span></p></footer>\n";

  std::string page = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta "
                     "charset=\"utf-8\">\n<meta name=\"viewport\" "
                     "content=\"width=device-width, initial-scale=1\">\n";
  page += "<title>cudal1 tuning report: " + name + "</title>\n<style>" + std::string(kStyle) +
          "</style>\n</head>\n<body>\n";
  page += "<main data-kernels=\"" + std::to_string(d.kernels.size()) + "\" data-plots=\"" +
          std::to_string(st.plots) + "\" data-samples=\"" + std::to_string(st.samples) + "\">\n";
  page += body;
  page += "</main>\n<script>" + std::string(kSelfCheck) + "</script>\n</body>\n</html>\n";
  return page;
}

Error writeReport(StringRef path, const ReportData &data) {
  return writeFileAtomically(path, renderReport(data));
}

} // namespace cudal1
