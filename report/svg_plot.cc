#include "report/svg_plot.h"

#include <algorithm>
#include <cmath>

#include "fmt/format.h"
#include "report/html_text.h"

namespace sparseditto::report {
namespace {

constexpr int kLeft = 64, kRight = 16, kTop = 40, kBottom = 44;

std::string Number(double v) {
  if (v != 0 && (std::fabs(v) >= 1e5 || std::fabs(v) < 1e-3)) return fmt::format("{:.2e}", v);
  return fmt::format("{:.4g}", v);
}

struct Range {
  double lo = 0, hi = 1;
  double At(double v, double from, double to) const { return from + (to - from) * (v - lo) / (hi - lo); }
};

std::string Frame(const PlotOptions& o, const std::string& inner) {
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"plot\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"sans-serif\" font-size=\"11\" role=\"img\">\n<title>{2}</title>\n"
      "<text x=\"{3}\" y=\"16\" text-anchor=\"middle\" font-size=\"13\">{2}</text>\n{4}</svg>\n",
      o.width, o.height, EscapeHtml(o.title), o.width / 2, inner);
}

}  // namespace

std::vector<double> NiceTicks(double lo, double hi, int max_ticks) {
  if (!std::isfinite(lo) || !std::isfinite(hi)) return {0, 1};
  if (lo > hi) std::swap(lo, hi);
  if (hi - lo < 1e-12 * std::max(1.0, std::fabs(hi))) {
    const double pad = lo == 0 ? 1 : std::fabs(lo) * 0.1;
    lo -= pad;
    hi += pad;
  }
  max_ticks = std::max(2, max_ticks);
  const double raw = (hi - lo) / (max_ticks - 1);
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  double step = power * 10;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    const double s = m * power;
    if (std::floor(lo / s) * s + s * (max_ticks - 1) >= hi - 1e-12 * s) {
      step = s;
      break;
    }
  }
  std::vector<double> ticks;
  const double first = std::floor(lo / step + 1e-9) * step;
  for (int i = 0; i < max_ticks + 1; ++i) {
    const double t = first + i * step;
    ticks.push_back(std::fabs(t) < step * 1e-9 ? 0 : t);
    if (t >= hi - step * 1e-9) break;
  }
  return ticks;
}

std::string LinePlotSvg(const std::vector<PlotSeries>& series, const PlotOptions& o) {
  double x_lo = 0, x_hi = 0, y_lo = 0, y_hi = 0;
  bool any = false;
  int left_out = 0;
  for (const PlotSeries& s : series) {
    for (const PlotPoint& p : s.points) {
      if (!std::isfinite(p.x) || !std::isfinite(p.y)) {
        ++left_out;
        continue;
      }
      x_lo = any ? std::min(x_lo, p.x) : p.x;
      x_hi = any ? std::max(x_hi, p.x) : p.x;
      y_lo = any ? std::min(y_lo, p.y) : p.y;
      y_hi = any ? std::max(y_hi, p.y) : p.y;
      any = true;
    }
  }
  if (!any) {
    return Frame(o, fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#666\">no data</text>\n",
                                o.width / 2, o.height / 2));
  }
  if (o.y_from_zero) y_lo = std::min(0.0, y_lo);
  const std::vector<double> xt = NiceTicks(std::min(0.0, x_lo), x_hi, 6), yt = NiceTicks(y_lo, y_hi, 6);
  const Range xr{xt.front(), xt.back()}, yr{yt.front(), yt.back()};
  const double left = kLeft, right = o.width - kRight, top = kTop, bottom = o.height - kBottom;
  const auto X = [&](double x) { return xr.At(x, left, right); };
  const auto Y = [&](double y) { return yr.At(y, bottom, top); };
  std::string out = fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#999\"/>\n",
                                left, top, right - left, bottom - top);
  for (double t : xt) {
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n", X(t), bottom + 14, Number(t));
  }
  for (double t : yt) {
    out += fmt::format("<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"#eee\"/>\n", left, Y(t), right, Y(t));
    out += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", left - 4, Y(t) + 4, Number(t));
  }
  out += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", (left + right) / 2, o.height - 10,
                     EscapeHtml(o.x_label));
  out += fmt::format("<text x=\"14\" y=\"{0:.1f}\" text-anchor=\"middle\" transform=\"rotate(-90 14 {0:.1f})\">{1}</text>\n",
                     (top + bottom) / 2, EscapeHtml(o.y_label));
  double legend_x = left;
  for (const PlotSeries& s : series) {
    const std::string colour = EscapeHtml(s.colour);
    std::string steps;
    std::string marks;
    bool first = true;
    double last_y = 0;
    for (const PlotPoint& p : s.points) {
      if (!std::isfinite(p.x) || !std::isfinite(p.y)) continue;
      if (!first) steps += fmt::format("{:.1f},{:.1f} ", X(p.x), last_y);
      last_y = Y(p.y);
      steps += fmt::format("{:.1f},{:.1f} ", X(p.x), last_y);
      first = false;
      if (s.markers) {
        marks += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"2.5\" fill=\"{}\" fill-opacity=\"0.6\">", X(p.x),
                             last_y, colour);
        marks += p.tip.empty() ? "</circle>\n" : "<title>" + EscapeHtml(p.tip) + "</title></circle>\n";
      }
    }
    if (s.line && !steps.empty()) {
      out += fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\" points=\"{}\"/>\n", colour, steps);
    }
    out += marks;
    out += fmt::format("<rect x=\"{:.0f}\" y=\"24\" width=\"10\" height=\"10\" fill=\"{}\"/>"
                       "<text x=\"{:.0f}\" y=\"33\">{}</text>\n",
                       legend_x, colour, legend_x + 14, EscapeHtml(s.name));
    legend_x += 24 + 7.0 * static_cast<double>(s.name.size());
  }
  if (left_out > 0) {
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"#a00\">{} points not finite, left out</text>\n",
                       right, o.height - 10, left_out);
  }
  return Frame(o, out);
}

std::string BarChartSvg(const std::vector<BarGroup>& groups, const BarChartOptions& o) {
  const int label_width = 150, value_width = 90, gap = 10;
  const double bar_left = label_width, bar_span = std::max(40, o.width - label_width - value_width);
  std::string out;
  int y = 28;
  for (const BarGroup& g : groups) {
    double largest = 0;
    for (const Bar& b : g.bars) {
      if (std::isfinite(b.value) && b.value > largest) largest = b.value;
    }
    out += fmt::format("<text x=\"0\" y=\"{}\" font-weight=\"bold\">{}</text>\n", y + 10, EscapeHtml(g.label));
    y += 14;
    for (const Bar& b : g.bars) {
      if (!std::isfinite(b.value) || b.value < 0) continue;
      const double length = largest > 0 ? bar_span * b.value / largest : 0;
      out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", label_width - 6,
                         y + o.bar_height - 3, EscapeHtml(b.label));
      out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\"><title>{}</title></rect>\n",
                         bar_left, y, length, o.bar_height, EscapeHtml(b.colour),
                         EscapeHtml(fmt::format("{}: {} {}", b.label, Number(b.value), o.unit)));
      out += fmt::format("<text x=\"{:.1f}\" y=\"{}\">{} {}</text>\n", bar_left + length + 4, y + o.bar_height - 3,
                         Number(b.value), EscapeHtml(o.unit));
      y += o.bar_height + 3;
    }
    y += gap;
  }
  PlotOptions frame{.width = o.width, .height = std::max(y, 40), .title = o.title};
  if (groups.empty()) {
    out = fmt::format("<text x=\"{}\" y=\"30\" text-anchor=\"middle\" fill=\"#666\">no data</text>\n", o.width / 2);
  }
  return Frame(frame, out);
}

}  // namespace sparseditto::report
