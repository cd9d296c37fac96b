// Small SVG charts drawn in C++ for the run report (html_report.h): a line-and-points plot and a
// horizontal grouped bar chart. The output is an <svg> element to inline in HTML (no script, no external
// reference); every text in it (titles, labels, tooltips) is escaped, so labels may come from the store.
// Points or values that are not finite are left out (and counted in the chart's caption).
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

namespace sparseditto::report {

// Round tick values covering [lo, hi]: steps of 1, 2 or 5 times a power of ten, at most `max_ticks`
// (at least 2) of them, the first <= lo and the last >= hi. lo == hi gives a range around that value;
// non-finite bounds give {0, 1}.
std::vector<double> NiceTicks(double lo, double hi, int max_ticks);

struct PlotPoint {
  double x = 0;
  double y = 0;
  std::string tip;  // shown when the pointer rests on the point (an SVG <title>); empty: none
};

struct PlotSeries {
  std::string name;               // in the legend
  std::string colour = "#1f77b4";  // a CSS colour; must be one of ours, it is not escaped beyond quotes
  std::vector<PlotPoint> points;  // in x order for a line
  bool line = false;              // join the points as steps (flat until the next point)
  bool markers = true;            // a small circle per point
};

struct PlotOptions {
  int width = 560;
  int height = 300;
  std::string title;
  std::string x_label;
  std::string y_label;
  bool y_from_zero = false;       // start the y axis at 0 (else at the lowest value, padded)
};

// The series on shared axes, with a legend. No series or no finite point: a frame saying "no data".
std::string LinePlotSvg(const std::vector<PlotSeries>& series, const PlotOptions& options);

struct Bar {
  std::string label;  // its name in the group ("candidate", "cublas_dense")
  double value = 0;   // >= 0 shown; negative or not finite: left out
  std::string colour = "#1f77b4";
};

struct BarGroup {
  std::string label;  // "n = 16"
  std::vector<Bar> bars;
};

struct BarChartOptions {
  int width = 560;
  std::string title;
  std::string unit;   // after each value: "ms"
  int bar_height = 14;
};

// One block per group, a horizontal bar per value (lengths scaled within the group: its largest value
// fills the width, as times at different n differ by orders of magnitude), each
// labelled with its name and value. Its height follows the bars.
std::string BarChartSvg(const std::vector<BarGroup>& groups, const BarChartOptions& options);

}  // namespace sparseditto::report
