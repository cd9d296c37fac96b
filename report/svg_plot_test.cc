#include "report/svg_plot.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace sparseditto::report {
namespace {

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(NiceTicksTest, CoverTheRangeInRoundSteps) {
  const double inf = std::numeric_limits<double>::infinity();
  const struct {
    double lo, hi;
    int max;
    std::vector<double> want;
  } cases[] = {
      {0, 1, 6, {0, 0.2, 0.4, 0.6, 0.8, 1}},
      {0, 26, 6, {0, 10, 20, 30}},
      {0.93, 1.27, 6, {0.9, 1.0, 1.1, 1.2, 1.3}},
      {3, 3, 6, {2.6, 2.8, 3, 3.2, 3.4}},  // a range of 10% either side
      {0, 0, 6, {-1, -0.5, 0, 0.5, 1}},
      {5, 1, 3, {0, 5}},
      {-inf, 1, 6, {0, 1}},
      {0, std::nan(""), 6, {0, 1}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(testing::Message() << c.lo << ".." << c.hi);
    const std::vector<double> ticks = NiceTicks(c.lo, c.hi, c.max);
    ASSERT_EQ(ticks.size(), c.want.size());
    for (size_t i = 0; i < ticks.size(); ++i) EXPECT_NEAR(ticks[i], c.want[i], 1e-9) << i;
  }
}

TEST(LinePlotSvgTest, DrawsEachFinitePointAndEscapesEveryText) {
  PlotSeries line{.name = "best so far", .line = true, .markers = false,};
  line.points = {{1, 0.5}, {2, 0.9}, {3, 0.9}};
  PlotSeries points{.name = "<b>evil</b>", .colour = "#123456"};
  points.points = {{1, 0.5, "</title><script>x</script>"}, {2, 0.9, "a&b"}, {std::nan(""), 1, ""}, {4, INFINITY, ""}};
  const struct {
    std::string name;
    std::vector<PlotSeries> series;
    int circles;
    int polylines;
    std::string words;
  } cases[] = {
      {"a line and points", {line, points}, 2, 1, "2 points not finite, left out"},
      {"no series", {}, 0, 0, "no data"},
      {"only points that are not finite", {PlotSeries{.points = {{std::nan(""), 0}}}}, 0, 0, "no data"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string svg = LinePlotSvg(c.series, {.title = "t <i>", .x_label = "x", .y_label = "y"});
    EXPECT_EQ(svg.rfind("<svg ", 0), 0u);
    EXPECT_EQ(Count(svg, "<circle"), static_cast<size_t>(c.circles));
    EXPECT_EQ(Count(svg, "<polyline"), static_cast<size_t>(c.polylines));
    EXPECT_NE(svg.find(c.words), std::string::npos) << svg;
    EXPECT_EQ(svg.find("nan"), std::string::npos) << svg;
    EXPECT_EQ(svg.find("inf"), std::string::npos) << svg;
    EXPECT_EQ(svg.find("<script"), std::string::npos);
    EXPECT_EQ(svg.find("<b>"), std::string::npos);
    EXPECT_EQ(svg.find("<i>"), std::string::npos);
    EXPECT_EQ(Count(svg, "<svg"), Count(svg, "</svg>"));
  }
}

// Points land where the axes say: the lowest y on the bottom edge of the frame, the highest x on its right.
TEST(LinePlotSvgTest, MapsValuesOntoTheFrame) {
  PlotSeries s;
  s.points = {{0, 0}, {10, 1}};
  const std::string svg = LinePlotSvg({s}, {.width = 564, .height = 300, .y_from_zero = true});
  EXPECT_NE(svg.find("<circle cx=\"64.0\" cy=\"256.0\""), std::string::npos) << svg;   // left 64, bottom 300 - 44
  EXPECT_NE(svg.find("<circle cx=\"548.0\" cy=\"40.0\""), std::string::npos) << svg;   // right 564 - 16, top 40
}

TEST(BarChartSvgTest, ScalesBarsWithinEachGroupAndEscapesLabels) {
  const std::vector<BarGroup> groups = {
      {.label = "n = 16", .bars = {{.label = "candidate", .value = 0.01}, {.label = "cublas_dense", .value = 0.02}}},
      {.label = "n = <2048>", .bars = {{.label = "x\"y", .value = 2}, {.label = "bad", .value = -1}, {.label = "nan", .value = std::nan("")}}},
  };
  const std::string svg = BarChartSvg(groups, {.width = 560, .title = "times", .unit = "ms"});
  EXPECT_EQ(Count(svg, "<rect "), 3u) << "negative and NaN values are left out";
  EXPECT_EQ(Count(svg, "width=\"320.0\""), 2u) << "the largest bar of each group fills the span (560 - 150 - 90)";
  EXPECT_NE(svg.find("width=\"160.0\""), std::string::npos) << "half the group's largest, half the span";
  EXPECT_NE(svg.find("n = &lt;2048&gt;"), std::string::npos);
  EXPECT_NE(svg.find("x&quot;y"), std::string::npos);
  EXPECT_NE(BarChartSvg({}, {}).find("no data"), std::string::npos);
}

}  // namespace
}  // namespace sparseditto::report
