// The bench's chart: each policy's best so far (the incumbent's measured
// throughput over the scenario's true optimum) against the GPU-hours spent,
// the median over every scenario and seed it ran, on one GPU-hour grid from
// 0 to the median campaign budget.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "attune/campaign/bench.h"
#include "attune/util/statistics.h"

namespace attune::campaign {

namespace {

constexpr int kGridPoints = 101;
constexpr double kWidth = 760, kHeight = 440;
constexpr double kLeft = 64, kRight = 170, kTop = 40, kBottom = 52;  // margins: the legend sits on the right
constexpr const char* kColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#7f7f7f"};

// The campaign's value at `gpuh`: its last point at or before it (0 before its first).
double value_at(const BenchCampaign& c, double gpuh) {
  double v = 0;
  for (const auto& [x, y] : c.curve) {
    if (x > gpuh) break;
    v = y;
  }
  return v;
}

// The policy's median over its campaigns at each grid point.
std::vector<double> median_curve(const BenchResult& r, const std::string& policy, const std::vector<double>& grid) {
  std::vector<double> out;
  for (double x : grid) {
    std::vector<double> at;
    for (const BenchCampaign& c : r.campaigns) {
      if (c.policy == policy) at.push_back(value_at(c, x));
    }
    out.push_back(median(at));
  }
  return out;
}

std::string escaped(const std::string& text) {
  std::string out;
  for (char ch : text) {
    if (ch == '<') out += "&lt;";
    else if (ch == '>') out += "&gt;";
    else if (ch == '&') out += "&amp;";
    else out += ch;
  }
  return out;
}

struct Frame {
  double x_max = 1, y_min = 0, y_max = 1.05;
  double x(double gpuh) const { return kLeft + (kWidth - kLeft - kRight) * gpuh / x_max; }
  double y(double v) const { return kTop + (kHeight - kTop - kBottom) * (y_max - std::clamp(v, y_min, y_max)) / (y_max - y_min); }
};

std::string axes(const Frame& f) {
  std::string out = fmt::format(
      "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"none\" stroke=\"#444\"/>\n", kLeft, kTop,
      kWidth - kLeft - kRight, kHeight - kTop - kBottom);
  for (int k = 0; k <= 5; ++k) {
    const double gpuh = f.x_max * k / 5, px = f.x(gpuh);
    out += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#ddd\"/>\n", px, kTop, kHeight - kBottom);
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{:g}</text>\n", px, kHeight - kBottom + 16, std::round(gpuh * 10) / 10);
  }
  const double step = f.y_max - f.y_min > 0.5 ? 0.1 : 0.05;
  for (double v = std::ceil(f.y_min / step) * step; v <= f.y_max + 1e-9; v += step) {
    const double py = f.y(v);
    out += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\"{}/>\n", kLeft, py,
                       kWidth - kRight, py, std::abs(v - 1) < 1e-9 ? "#444" : "#ddd",
                       std::abs(v - 1) < 1e-9 ? " stroke-dasharray=\"4 3\"" : "");
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{:.2f}</text>\n", kLeft - 6, py + 4, v);
  }
  out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">GPU-hours spent</text>\n",
                     (kLeft + kWidth - kRight) / 2, kHeight - 12);
  out += fmt::format("<text transform=\"translate(16 {:.1f}) rotate(-90)\" text-anchor=\"middle\">best so far / true optimum</text>\n",
                     (kTop + kHeight - kBottom) / 2);
  return out;
}

}  // namespace

std::string bench_chart_svg(const BenchResult& r) {
  // Scenarios with budgets of their own share the chart up to the median
  // budget: what each had reached by then (all of it under one --budget).
  Frame f;
  std::vector<double> budgets;
  for (const BenchCampaign& c : r.campaigns) budgets.push_back(c.budget_gpu_hours);
  f.x_max = std::max(1.0, median(budgets));
  std::vector<double> grid;
  for (int k = 0; k < kGridPoints; ++k) grid.push_back(f.x_max * k / (kGridPoints - 1));
  std::vector<std::vector<double>> curves;
  double lowest = 1;
  for (const std::string& p : r.policies) {
    curves.push_back(median_curve(r, p, grid));
    for (double v : curves.back()) {
      if (v > 0) lowest = std::min(lowest, v);
      f.y_max = std::max(f.y_max, v);
    }
  }
  f.y_min = std::max(0.0, std::floor(lowest * 10 - 1e-9) / 10);
  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:g}\" height=\"{1:g}\" viewBox=\"0 0 {0:g} {1:g}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
      kWidth, kHeight);
  out += fmt::format("<text x=\"{:.1f}\" y=\"24\" text-anchor=\"middle\" font-size=\"14\">Best so far against GPU-hours "
                     "(median over {} scenarios x {} seeds)</text>\n",
                     (kLeft + kWidth - kRight) / 2, r.scenarios.size(), r.seeds);
  out += axes(f);
  for (std::size_t i = 0; i < r.policies.size(); ++i) {
    const char* colour = kColours[i % std::size(kColours)];
    std::string points;
    for (std::size_t k = 0; k < grid.size(); ++k) {
      if (curves[i][k] <= 0) continue;  // nothing measured yet
      points += fmt::format("{}{:.1f},{:.1f}", points.empty() ? "" : " ", f.x(grid[k]), f.y(curves[i][k]));
    }
    out += fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\" points=\"{}\"><title>{}</title></polyline>\n",
                       colour, points, escaped(r.policies[i]));
    const double ly = kTop + 10 + 20.0 * static_cast<double>(i);
    out += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{2:.1f}\" y2=\"{1:.1f}\" stroke=\"{3}\" stroke-width=\"2\"/>\n",
                       kWidth - kRight + 14, ly, kWidth - kRight + 38, colour);
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n", kWidth - kRight + 44, ly + 4, escaped(r.policies[i]));
  }
  return out + "</svg>\n";
}

}  // namespace attune::campaign
