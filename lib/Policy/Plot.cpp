// The training curve as SVG (Plot.h).
#include "Plot.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <functional>

namespace cudal1 {
namespace {

std::string escape(const std::string &s) {
  std::string out;
  for (char c : s)
    out += c == '<' ? "&lt;" : c == '>' ? "&gt;" : c == '&' ? "&amp;" : std::string(1, c);
  return out;
}

struct Series {
  const char *name, *color;
  std::function<double(const policynet::CurvePoint &)> value;
  /// The stages the series means something in.
  std::string stages;
};

constexpr double kW = 420, kH = 240, kLeft = 52, kTop = 28, kRight = 12, kBottom = 34;

void panel(std::string &out, double x0, double y0, const char *title,
           const std::vector<policynet::CurvePoint> &curve, const std::vector<Series> &series) {
  // The range over the points each series means something at.
  double lo = INFINITY, hi = -INFINITY;
  for (const Series &s : series)
    for (const auto &p : curve)
      if (s.stages.find(p.stage) != std::string::npos) {
        double v = s.value(p);
        if (std::isfinite(v)) {
          lo = std::min(lo, v);
          hi = std::max(hi, v);
        }
      }
  if (!(lo <= hi)) {
    lo = 0;
    hi = 1;
  }
  if (hi - lo < 1e-9) {
    lo -= 0.5;
    hi += 0.5;
  }
  double pw = kW - kLeft - kRight, ph = kH - kTop - kBottom;
  size_t n = curve.size();
  auto X = [&](size_t i) { return x0 + kLeft + (n > 1 ? pw * double(i) / double(n - 1) : pw / 2); };
  auto Y = [&](double v) { return y0 + kTop + ph * (1 - (v - lo) / (hi - lo)); };
  out += llvm::formatv("<rect x='{0}' y='{1}' width='{2}' height='{3}' fill='none' "
                       "stroke='#888'/>\n",
                       x0 + kLeft, y0 + kTop, pw, ph);
  out += llvm::formatv("<text x='{0}' y='{1}' font-size='13' font-weight='bold'>{2}</text>\n",
                       x0 + kLeft, y0 + 18, title);
  for (int t = 0; t <= 4; ++t) {
    double v = lo + (hi - lo) * t / 4;
    out += llvm::formatv("<text x='{0}' y='{1}' font-size='10' text-anchor='end'>{2:F3}</text>\n",
                         x0 + kLeft - 4, Y(v) + 3, v);
    out += llvm::formatv("<line x1='{0}' y1='{1}' x2='{2}' y2='{1}' stroke='#eee'/>\n", x0 + kLeft,
                         Y(v), x0 + kLeft + pw);
  }
  // Stage boundaries and the epochs below.
  for (size_t i = 0; i < n; ++i) {
    if (i == 0 || curve[i].stage != curve[i - 1].stage) {
      if (i > 0)
        out += llvm::formatv("<line x1='{0}' y1='{1}' x2='{0}' y2='{2}' stroke='#aaa' "
                             "stroke-dasharray='4,3'/>\n",
                             (X(i) + X(i - 1)) / 2, y0 + kTop, y0 + kTop + ph);
      out += llvm::formatv("<text x='{0}' y='{1}' font-size='10'>stage {2}</text>\n", X(i) + 2,
                           y0 + kTop + 11, curve[i].stage);
    }
    if (n <= 12 || i % ((n + 11) / 12) == 0 || i + 1 == n)
      out += llvm::formatv("<text x='{0}' y='{1}' font-size='9' text-anchor='middle'>{2}</text>\n",
                           X(i), y0 + kTop + ph + 12, curve[i].epoch);
  }
  out += llvm::formatv("<text x='{0}' y='{1}' font-size='10' text-anchor='middle'>epoch "
                       "(per stage)</text>\n",
                       x0 + kLeft + pw / 2, y0 + kTop + ph + 26);
  double lx = x0 + kLeft + pw - 4;
  for (size_t si = 0; si < series.size(); ++si) {
    const Series &s = series[si];
    std::string pts;
    for (size_t i = 0; i < n; ++i) {
      double v = s.value(curve[i]);
      bool means = s.stages.find(curve[i].stage) != std::string::npos && std::isfinite(v);
      if (!means) {
        if (!pts.empty())
          out += llvm::formatv("<polyline fill='none' stroke='{0}' stroke-width='1.6' "
                               "points='{1}'/>\n",
                               s.color, pts);
        pts.clear();
        continue;
      }
      pts += llvm::formatv("{0:F1},{1:F1} ", X(i), Y(v)).str();
      if (curve[i].selected)
        out += llvm::formatv("<circle cx='{0:F1}' cy='{1:F1}' r='3.5' fill='{2}'/>\n", X(i), Y(v),
                             s.color);
    }
    if (!pts.empty())
      out += llvm::formatv("<polyline fill='none' stroke='{0}' stroke-width='1.6' points='{1}'/>\n",
                           s.color, pts);
    out += llvm::formatv("<text x='{0}' y='{1}' font-size='10' text-anchor='end' "
                         "fill='{2}'>{3}</text>\n",
                         lx, y0 + kTop + 12 + 12 * double(si + 1), s.color, s.name);
  }
}

} // namespace

std::string curveSvg(const std::vector<policynet::CurvePoint> &curve, const std::string &title) {
  using P = policynet::CurvePoint;
  const char *train = "#1f77b4", *val = "#d62728";
  struct Panel {
    const char *title;
    std::vector<Series> series;
  };
  std::vector<Panel> panels = {
      {"loss (of each stage)",
       {{"train", train, [](const P &p) { return p.trainLoss; }, "abc"},
        {"validation", val, [](const P &p) { return p.validationLoss; }, "abc"}}},
      {"pair accuracy (non-tied pairs)",
       {{"train", train, [](const P &p) { return p.trainPairAccuracy; }, "abc"},
        {"validation", val, [](const P &p) { return p.validationPairAccuracy; }, "abc"}}},
      {"top-1 (the clear best ranked first)",
       {{"train", train, [](const P &p) { return p.trainTop1; }, "abc"},
        {"validation", val, [](const P &p) { return p.validationTop1; }, "abc"}}},
      {"verification accuracy",
       {{"train", train, [](const P &p) { return p.trainVerifyAccuracy; }, "ab"},
        {"validation", val, [](const P &p) { return p.validationVerifyAccuracy; }, "ab"}}},
      {"stage (c) return (best log LCB found)",
       {{"train", train, [](const P &p) { return p.trainReturn; }, "c"},
        {"validation", val, [](const P &p) { return p.validationReturn; }, "c"}}},
      {"stage (c) best plan found within budget",
       {{"train", train, [](const P &p) { return p.trainFound; }, "c"},
        {"validation", val, [](const P &p) { return p.validationFound; }, "c"}}},
  };
  double width = 2 * kW, height = 3 * kH + 30;
  std::string out = llvm::formatv("<svg xmlns='http://www.w3.org/2000/svg' width='{0}' "
                                  "height='{1}' font-family='sans-serif'>\n"
                                  "<rect width='100%' height='100%' fill='white'/>\n"
                                  "<text x='10' y='18' font-size='12'>{2}</text>\n",
                                  width, height, escape(title))
                        .str();
  for (size_t i = 0; i < panels.size(); ++i)
    panel(out, double(i % 2) * kW, 30 + double(i / 2) * kH, panels[i].title, curve,
          panels[i].series);
  out += "</svg>\n";
  return out;
}

} // namespace cudal1
