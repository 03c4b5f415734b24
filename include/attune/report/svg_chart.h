// SvgChart: one chart of the report as inline SVG, drawn from numbers alone
// (no script, no font files, no images), so the page needs no network. A
// point without a value is drawn as missing (a cross below the axis), never
// as zero.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace attune::report {

struct ChartPoint {
  double x = 0;
  std::optional<double> y;          // none: drawn as missing
  std::optional<double> low, high;  // an interval, drawn as a bar through the point
  std::string label;                // the tooltip (escaped when drawn)
  std::string kind;                 // baseline | accepted | rejected | failed | ...: the point's colour
};

struct ChartSpec {
  std::string id, title, x_label, y_label;
  std::vector<ChartPoint> points;
  bool step_line = false;           // the points joined as a step line (best so far)
  bool integer_x = false;           // x is a trial number: integer ticks
  std::optional<double> limit;      // a horizontal line (the GPU's memory)
  std::string limit_label;
  int width = 640, height = 300;
};

// The colour a point of this kind is filled with ("#rrggbb").
std::string point_colour(const std::string& kind);

std::string render_svg(const ChartSpec& chart);

}  // namespace attune::report
