// The report generator alone: escaping, the line diff, the SVG plots, the
// roofline arithmetic and the page's structure.
#include "cudal1/Report/Report.h"

#include "llvm/ADT/StringRef.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <regex>
#include <sstream>

using namespace cudal1;

namespace {

size_t count(const std::string &hay, const std::string &needle) {
  size_t n = 0;
  for (size_t p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + 1))
    ++n;
  return n;
}

ReportData sampleData() {
  ReportData d;
  d.sourceFile = "app<1>.cu";
  d.outputFile = "out.cu";
  d.mode = "--tune";
  d.gpu = "NVIDIA H200";
  d.date = "2026-12-02T12:00:00Z";
  d.timeSource = "the program's own report (^gpu_ms=(\\S+))";
  d.programTimes = true;
  d.baselines = {{1, 60, {60, 61, 59.5}}};
  ReportKernel k;
  k.name = "sum";
  k.key = "_Z3sumPf#abc";
  k.bestPlan = "@sum: warp-reduce";
  k.speedup = 3;
  k.lo = 2.9;
  k.hi = 3.1;
  k.tried = 2;
  k.correct = 1;
  ReportVariant v;
  v.id = "v000";
  v.plan = "@sum: warp-reduce";
  v.measured.outcome = Outcome::Ok;
  v.measured.timed = v.measured.faster = true;
  v.measured.speedup = 3;
  v.measured.lo = 2.9;
  v.measured.hi = 3.1;
  v.measured.timeMs = 20;
  v.measured.samplesMs = {20, 20.5, 19.8};
  v.batch = 1;
  k.variants.push_back(v);
  ReportVariant w;
  w.id = "v001";
  w.plan = "@sum: launch-config(block=1024)";
  w.measured.outcome = Outcome::Wrong;
  w.measured.details = {"expected <1.25> got \"1.375\" & more"};
  w.batch = 1;
  k.variants.push_back(w);
  d.kernels.push_back(k);
  ReportKernel other;
  other.name = "scale";
  other.key = "_Z5scalePf#def";
  d.kernels.push_back(other);
  d.finalPlan = k.bestPlan;
  d.finalSpeedup = 3;
  d.finalLo = 2.9;
  d.finalHi = 3.1;
  d.finalMs = 20;
  d.originalSource = "int a;\n// x < y && \"q\"\nint b;\n";
  d.tunedSource = "int a;\n// x < y && \"q\"\nint c;\n";
  d.floor = {true, 4.8e9, 0, "f32"};
  d.ceilings = nominalCeilings("NVIDIA H200");
  return d;
}

} // namespace

TEST(Report, EscapesHtml) {
  EXPECT_EQ(htmlEscape("<a href=\"x\">&'</a>"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;");
  EXPECT_EQ(htmlEscape("plain_text 1.5x"), "plain_text 1.5x");
}

TEST(Report, UnifiedDiff) {
  EXPECT_EQ(unifiedDiff("a\nb\n", "a\nb\n", "x", "y"), "");
  std::string before, after;
  for (int i = 1; i <= 20; ++i) {
    before += "line" + std::to_string(i) + "\n";
    after += (i == 5 ? std::string("changed5") : "line" + std::to_string(i)) + "\n";
    if (i == 15)
      after += "inserted\n";
  }
  EXPECT_EQ(unifiedDiff(before, after, "a/f", "b/f", 2),
            "--- a/f\n+++ b/f\n"
            "@@ -3,5 +3,5 @@\n line3\n line4\n-line5\n+changed5\n line6\n line7\n"
            "@@ -14,4 +14,5 @@\n line14\n line15\n+inserted\n line16\n line17\n");
  // Changes close together share a hunk; a whole new file is one hunk.
  EXPECT_EQ(count(unifiedDiff(before, after, "a", "b", 5), "@@ -"), 1u);
  EXPECT_EQ(unifiedDiff("", "x\ny\n", "a", "b"), "--- a\n+++ b\n@@ -0,0 +1,2 @@\n+x\n+y\n");
  EXPECT_EQ(unifiedDiff("x\n", "", "a", "b"), "--- a\n+++ b\n@@ -1,1 +0,0 @@\n-x\n");
}

TEST(Report, DiffIsMinimalOnInterleavedEdits) {
  // Myers finds the shortest script: 2 deletions and 2 insertions here.
  std::string d = unifiedDiff("a\nb\nc\nd\ne\n", "a\nx\nc\ny\ne\n", "1", "2");
  EXPECT_EQ(count(d, "\n-"), 2u);
  EXPECT_EQ(count(d, "\n+"), 2u + 1); // and the "+++" header
  EXPECT_EQ(count(d, "\n a"), 1u);
}

TEST(Report, TimingPlotDrawsEverySample) {
  std::vector<PlotRow> rows(2);
  rows[0].label = "original";
  rows[0].kind = PlotRow::Original;
  rows[0].samplesMs = {1.0, 1.1, 1.2, 0.9};
  rows[1].label = "v<1> & 'x'";
  rows[1].kind = PlotRow::Faster;
  rows[1].samplesMs = {0.5, 0.55, double(NAN)};
  rows[1].note = "2.000x [1.9, 2.1]";
  std::string svg = renderTimingPlot(rows, "t<itle>");
  EXPECT_EQ(svg.rfind("<svg class=\"cudal1-plot\"", 0), 0u);
  EXPECT_EQ(count(svg, "<circle class=\"sample\""), 6u); // NaN left out
  EXPECT_EQ(count(svg, "<rect class=\"box\""), 2u);
  EXPECT_EQ(count(svg, "class=\"median\""), 2u);
  EXPECT_NE(svg.find("v&lt;1&gt; &amp; &#39;x&#39;"), std::string::npos);
  EXPECT_EQ(svg.find("v<1>"), std::string::npos);
  EXPECT_NE(svg.find("t&lt;itle&gt;"), std::string::npos);
  EXPECT_NE(svg.find("time per run (ms)"), std::string::npos);
  EXPECT_NE(svg.find("#15803d"), std::string::npos); // the faster colour

  // Samples map to x in order: the fastest dot is left of the slowest.
  std::regex cx("<circle class=\"sample\" cx=\"([0-9.]+)\"");
  std::vector<double> xs;
  for (std::sregex_iterator it(svg.begin(), svg.end(), cx), end; it != end; ++it)
    xs.push_back(std::stod((*it)[1]));
  ASSERT_EQ(xs.size(), 6u);
  EXPECT_LT(xs[3], xs[2]); // 0.9 ms left of 1.2 ms
  EXPECT_LT(xs[4], xs[3]); // 0.5 ms left of 0.9 ms

  // Without samples: the median alone, and a note that says so.
  std::vector<PlotRow> bare(1);
  bare[0].label = "old";
  bare[0].medianMs = 2;
  std::string s2 = renderTimingPlot(bare, "t");
  EXPECT_EQ(count(s2, "<circle"), 0u);
  EXPECT_EQ(count(s2, "class=\"median\""), 1u);
  EXPECT_NE(s2.find("no samples recorded"), std::string::npos);
}

TEST(Report, Roofline) {
  RooflineCeilings c{1000, 2000, 1000, "test"};
  ProgramFloor mem{true, 1e9, 1e9, "f32"}; // 1 ms memory, 0.5 ms compute
  RooflineFloor f = computeRooflineFloor(mem, c);
  ASSERT_TRUE(f.known);
  EXPECT_DOUBLE_EQ(f.floorMs, 1.0);
  EXPECT_EQ(f.bound, "memory");
  ProgramFloor dbl{true, 1e9, 4e9, "f64"}; // 4 ms compute
  f = computeRooflineFloor(dbl, c);
  EXPECT_DOUBLE_EQ(f.floorMs, 4.0);
  EXPECT_EQ(f.bound, "compute");
  ProgramFloor ints{true, 1e9, 1e12, "i32"}; // no arithmetic ceiling
  EXPECT_DOUBLE_EQ(computeRooflineFloor(ints, c).floorMs, 1.0);
  EXPECT_FALSE(computeRooflineFloor(ProgramFloor{}, c).known);

  EXPECT_TRUE(nominalCeilings("NVIDIA H200").has_value());
  EXPECT_TRUE(nominalCeilings("NVIDIA H100 80GB HBM3").has_value());
  EXPECT_FALSE(nominalCeilings("Fake GPU").has_value());

  llvm::Expected<RooflineCeilings> m = parseCeilings(
      "gpu: NVIDIA H200\nbw_gbs=4260.7 sgemm_gflops=51152 dgemm_gflops=56721\n", "c.txt");
  ASSERT_TRUE(bool(m));
  EXPECT_DOUBLE_EQ(m->bandwidthGBs, 4260.7);
  EXPECT_DOUBLE_EQ(m->f64Gflops, 56721);
  EXPECT_NE(m->source.find("c.txt"), std::string::npos);
  llvm::Expected<RooflineCeilings> bad = parseCeilings("bw_gbs=1\n", "d.txt");
  ASSERT_FALSE(bool(bad));
  EXPECT_NE(llvm::toString(bad.takeError()).find("d.txt"), std::string::npos);
}

TEST(Report, PageStructure) {
  ReportData d = sampleData();
  std::string page = renderReport(d);
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  // Self-contained: nothing loaded from elsewhere.
  for (const char *s : {"<link", "src=", "@import", "url(", "http:", "https:"})
    EXPECT_EQ(page.find(s), std::string::npos) << s;
  EXPECT_EQ(count(page, "<section class=\"kernel\""), 2u);
  // One plot: `scale` has no timed variant.
  EXPECT_EQ(count(page, "<svg class=\"cudal1-plot\""), 1u);
  EXPECT_EQ(count(page, "<circle class=\"sample\""), 6u);
  EXPECT_NE(page.find("data-kernels=\"2\" data-plots=\"1\" data-samples=\"6\""), std::string::npos);
  EXPECT_NE(page.find("3.000x [2.900, 3.100]"), std::string::npos);
  // User text is escaped everywhere: file name, details, the diff.
  EXPECT_EQ(page.find("app<1>"), std::string::npos);
  EXPECT_NE(page.find("app&lt;1&gt;.cu"), std::string::npos);
  EXPECT_NE(page.find("expected &lt;1.25&gt; got &quot;1.375&quot; &amp; more"), std::string::npos);
  EXPECT_NE(page.find("<span class=\"del\">-int b;</span>"), std::string::npos);
  EXPECT_NE(page.find("<span class=\"add\">+int c;</span>"), std::string::npos);
  EXPECT_NE(page.find("<span class=\"ctx\"> // x &lt; y &amp;&amp; "
                      "&quot;q&quot;</span>"),
            std::string::npos);
  // Roofline: 4.8e9 bytes at 4.8 TB/s is 1 ms; 60 ms original, 20 ms tuned.
  EXPECT_NE(page.find("1.7% original &rarr; 5.0% tuned"), std::string::npos);
  EXPECT_NE(page.find("nominal NVIDIA H200"), std::string::npos);
  EXPECT_NE(page.find("selfcheck: not run"), std::string::npos);
}

TEST(Report, PromisesOnlyTheSamplesItDraws) {
  // A NaN sample is not drawn, so the browser's self-check must not expect it.
  ReportData d = sampleData();
  d.kernels[0].variants[0].measured.samplesMs.push_back(double(NAN));
  std::string page = renderReport(d);
  EXPECT_NE(page.find("data-samples=\"6\""), std::string::npos);
  EXPECT_EQ(count(page, "<circle class=\"sample\""), 6u);
}

TEST(Report, RooflineNotAvailableSaysWhy) {
  ReportData d = sampleData();
  d.programTimes = false;
  EXPECT_NE(renderReport(d).find("n/a: the times are whole-process wall"), std::string::npos);
  d = sampleData();
  d.ceilings.reset();
  d.ceilingsNote = "no ceilings known for Fake GPU";
  EXPECT_NE(renderReport(d).find("n/a: no ceilings known for Fake GPU"), std::string::npos);
  d = sampleData();
  d.floor.known = false;
  EXPECT_NE(renderReport(d).find("n/a: the program prints no roofline floor"), std::string::npos);
  d = sampleData();
  d.finalPlan.clear();
  d.tunedSource = d.originalSource;
  std::string page = renderReport(d);
  EXPECT_NE(page.find("original kept"), std::string::npos);
  EXPECT_NE(page.find("The output is the original, unchanged."), std::string::npos);
}

namespace {
/// Applies a unified diff to `before` (a minimal `patch` for the property
/// test below); "" when a hunk does not match.
std::string applyDiff(const std::string &before, const std::string &diff) {
  std::vector<std::string> in, out;
  std::istringstream bs(before), ds(diff);
  for (std::string l; std::getline(bs, l);)
    in.push_back(l);
  size_t pos = 0;
  for (std::string l; std::getline(ds, l);) {
    if (l.rfind("---", 0) == 0 || l.rfind("+++", 0) == 0)
      continue;
    if (l.rfind("@@ -", 0) == 0) {
      size_t start = std::stoul(l.substr(4));
      size_t count = std::stoul(l.substr(l.find(',') + 1));
      size_t to = count == 0 ? start : start - 1;
      while (pos < to)
        out.push_back(in[pos++]);
      continue;
    }
    if (l[0] == '+') {
      out.push_back(l.substr(1));
    } else {
      if (pos >= in.size() || in[pos] != l.substr(1))
        return "<mismatch>";
      if (l[0] == ' ')
        out.push_back(in[pos]);
      ++pos;
    }
  }
  while (pos < in.size())
    out.push_back(in[pos++]);
  std::string text;
  for (const std::string &l : out)
    text += l + "\n";
  return text;
}
} // namespace

TEST(Report, DiffAppliesBackOnRandomEdits) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    std::string a, b;
    int n = int(rng() % 40);
    for (int i = 0; i < n; ++i) {
      std::string line = "l" + std::to_string(rng() % 6);
      a += line + "\n";
      switch (rng() % 5) {
      case 0: // deleted
        break;
      case 1: // replaced
        b += "r" + std::to_string(rng() % 3) + "\n";
        break;
      case 2: // an insertion before it
        b += "i\n" + line + "\n";
        break;
      default:
        b += line + "\n";
      }
    }
    std::string d = unifiedDiff(a, b, "a", "b", unsigned(rng() % 4));
    if (a == b) {
      EXPECT_EQ(d, "");
      continue;
    }
    EXPECT_EQ(applyDiff(a, d), b) << "trial " << trial << "\n" << d;
  }
}

TEST(Report, DiffOfUnrelatedLargeFilesStaysBounded) {
  // Nothing in common: the edit script is as long as both files together,
  // past the trace bound, and the diff replaces the whole text.
  std::string a, b;
  for (int i = 0; i < 3000; ++i) {
    a += "a" + std::to_string(i) + "\n";
    b += "b" + std::to_string(i) + "\n";
  }
  std::string d = unifiedDiff(a, b, "a", "b");
  EXPECT_EQ(count(d, "@@ -1,3000 +1,3000 @@"), 1u);
  EXPECT_EQ(applyDiff(a, d), b);
}
