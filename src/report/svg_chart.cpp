// Inline SVG charts (svg_chart.h). Every value that reaches the markup is a
// number formatted here or text through escape_html.
#include "attune/report/svg_chart.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "attune/report/markup.h"

namespace attune::report {

namespace {

constexpr double kLeft = 64, kRight = 16, kTop = 30, kBottom = 58;

struct Range {
  double lo = 0, hi = 1;
};

// A tick step of 1, 2 or 5 times a power of ten, about five ticks per range.
double tick_step(const Range& r, bool integer) {
  const double raw = (r.hi - r.lo) / 5;
  const double mag = std::pow(10, std::floor(std::log10(raw)));
  double step = mag;
  for (const double f : {1.0, 2.0, 5.0, 10.0}) {
    step = f * mag;
    if (step >= raw) break;
  }
  return integer ? std::max(1.0, std::round(step)) : step;
}

std::string number_label(double v) {
  if (std::abs(v) >= 1000) return fmt::format("{:.0f}", v);
  if (std::abs(v - std::round(v)) < 1e-9) return fmt::format("{:.0f}", v);
  return fmt::format("{:.3g}", v);
}

class Plot {
 public:
  explicit Plot(const ChartSpec& c) : c_(c) {
    x1_ = c.width - kRight;
    y1_ = c.height - kBottom;
    bool any_x = false;
    for (const ChartPoint& p : c.points) {
      x_.lo = any_x ? std::min(x_.lo, p.x) : p.x;
      x_.hi = any_x ? std::max(x_.hi, p.x) : p.x;
      any_x = true;
      for (const auto& v : {p.y, p.low, p.high}) {
        if (v) y_.hi = std::max(y_.hi, *v);
      }
    }
    if (c.limit) y_.hi = std::max(y_.hi, *c.limit);
    y_.hi *= 1.08;
    const double pad = c.integer_x ? 0.5 : 0.0;
    x_.lo -= pad;
    x_.hi += pad;
    if (x_.hi - x_.lo < 1e-9) x_ = {x_.lo - 1, x_.hi + 1};
    if (!c.integer_x) x_.lo = std::min(x_.lo, 0.0);
  }

  double sx(double x) const { return kLeft + (x - x_.lo) / (x_.hi - x_.lo) * (x1_ - kLeft); }
  double sy(double y) const { return y1_ - (y - y_.lo) / (y_.hi - y_.lo) * (y1_ - kTop); }

  std::string axes() const {
    std::string s = fmt::format(R"(<rect class="plot" x="{}" y="{}" width="{}" height="{}" fill="#ffffff" stroke="#999999"/>)",
                                kLeft, kTop, x1_ - kLeft, y1_ - kTop);
    const double ys = tick_step(y_, false);
    for (double v = 0; v <= y_.hi + 1e-9; v += ys) {
      s += fmt::format(R"(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="#e5e5e5"/>)", kLeft, sy(v), x1_, sy(v));
      s += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" font-size="11" text-anchor="end" fill="#333333">{}</text>)", kLeft - 4,
                       sy(v) + 4, number_label(v));
    }
    const double xs = tick_step(x_, c_.integer_x);
    for (double v = std::ceil(x_.lo / xs) * xs; v <= x_.hi + 1e-9; v += xs) {
      s += fmt::format(R"(<text x="{:.1f}" y="{:.1f}" font-size="11" text-anchor="middle" fill="#333333">{}</text>)", sx(v),
                       y1_ + 14, number_label(v));
    }
    s += fmt::format(R"(<text x="{:.1f}" y="{}" font-size="13" font-weight="bold" fill="#111111">{}</text>)", kLeft, kTop - 10,
                     escape_html(c_.title));
    s += fmt::format(R"(<text x="{:.1f}" y="{}" font-size="11" text-anchor="middle" fill="#333333">{}</text>)",
                     (kLeft + x1_) / 2, c_.height - 6, escape_html(c_.x_label));
    s += fmt::format(R"svg(<text x="12" y="{:.1f}" font-size="11" text-anchor="middle" fill="#333333" transform="rotate(-90 12 {:.1f})">{}</text>)svg",
                     (kTop + y1_) / 2, (kTop + y1_) / 2, escape_html(c_.y_label));
    return s;
  }

  std::string limit() const {
    if (!c_.limit) return "";
    const double y = sy(*c_.limit);
    return fmt::format(R"(<line class="limit" x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="#d62728" stroke-dasharray="6 4"/>)",
                       kLeft, y, x1_, y) +
           fmt::format(R"(<text x="{:.1f}" y="{:.1f}" font-size="11" text-anchor="end" fill="#d62728">{}</text>)", x1_ - 4, y - 4,
                       escape_html(c_.limit_label));
  }

  std::string step_line() const {
    std::string pts;
    const ChartPoint* prev = nullptr;
    for (const ChartPoint& p : c_.points) {
      if (!p.y) continue;
      if (prev != nullptr) pts += fmt::format("{:.1f},{:.1f} ", sx(p.x), sy(*prev->y));
      pts += fmt::format("{:.1f},{:.1f} ", sx(p.x), sy(*p.y));
      prev = &p;
    }
    return fmt::format(R"(<polyline class="line" fill="none" stroke="#1f77b4" stroke-width="2" points="{}"/>)", pts);
  }

  std::string point(const ChartPoint& p) const {
    const std::string tip = "<title>" + escape_html(p.label) + "</title>";
    const double x = sx(p.x);
    if (!p.y) {
      const double y = y1_ + 28;  // below the axis: no value, not zero
      return fmt::format(R"(<g class="missing"><path d="M{:.1f} {:.1f} l8 8 m0 -8 l-8 8" stroke="#7f7f7f" stroke-width="2"/>{}</g>)",
                         x - 4, y - 4, tip);
    }
    std::string s;
    if (p.low && p.high)
      s += fmt::format(R"(<line class="interval" x1="{0:.1f}" y1="{1:.1f}" x2="{0:.1f}" y2="{2:.1f}" stroke="#555555" stroke-width="1.5"/>)",
                       x, sy(*p.low), sy(*p.high));
    s += fmt::format(R"(<circle class="point {}" cx="{:.1f}" cy="{:.1f}" r="5" fill="{}" stroke="#222222" stroke-width="0.5">{}</circle>)",
                     escape_html(p.kind), x, sy(*p.y), point_colour(p.kind), tip);
    return s;
  }

  bool any_missing() const {
    return std::any_of(c_.points.begin(), c_.points.end(), [](const ChartPoint& p) { return !p.y; });
  }

 private:
  const ChartSpec& c_;
  Range x_, y_;
  double x1_ = 0, y1_ = 0;
};

}  // namespace

std::string point_colour(const std::string& kind) {
  if (kind == "baseline") return "#9467bd";
  if (kind == "accepted") return "#2ca02c";
  if (kind == "failed" || kind == "demoted") return "#d62728";
  if (kind == "best") return "#1f77b4";
  return "#ff7f0e";
}

std::string render_svg(const ChartSpec& c) {
  const Plot plot(c);
  std::string s = fmt::format(R"(<svg id="{}" xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" viewBox="0 0 {} {}" role="img" font-family="sans-serif">)",
                              escape_html(c.id), c.width, c.height, c.width, c.height);
  s += fmt::format(R"(<rect x="0" y="0" width="{}" height="{}" fill="#fafafa"/>)", c.width, c.height);
  s += plot.axes();
  s += plot.limit();
  if (c.step_line) s += plot.step_line();
  for (const ChartPoint& p : c.points) s += plot.point(p);
  if (plot.any_missing())
    s += fmt::format(R"(<text x="{}" y="{}" font-size="10" text-anchor="end" fill="#7f7f7f">&#215; no value</text>)", c.width - kRight,
                     c.height - 6);
  return s + "</svg>";
}

}  // namespace attune::report
