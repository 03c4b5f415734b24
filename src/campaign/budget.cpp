#include "attune/campaign/budget.h"

#include <cctype>
#include <cstdlib>

#include "attune/util/error.h"
#include "attune/util/text.h"

namespace attune::campaign {

double parse_budget(const std::string& text, const std::string& flag) {
  std::string t = to_lower(trim(text));
  auto fail = [&] {
    throw InputError({}, flag, "expected GPU-hours such as 200gpuh, 1.5kgpuh or 200; got '" + text + "'");
  };
  for (const char* unit : {"gpuh", "gpu-h", "gpuhours", "gpu-hours"}) {
    const std::string u(unit);
    if (t.size() > u.size() && t.compare(t.size() - u.size(), u.size(), u) == 0) {
      t.resize(t.size() - u.size());
      break;
    }
  }
  double scale = 1;
  if (!t.empty() && (t.back() == 'k' || t.back() == 'K')) {
    scale = 1000;
    t.pop_back();
  }
  t = std::string(trim(t));
  if (t.empty() || !(std::isdigit(static_cast<unsigned char>(t[0])) || t[0] == '.')) fail();
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (*end != '\0') fail();
  if (!(v > 0)) throw InputError({}, flag, "the budget must be more than 0 GPU-hours; got '" + text + "'");
  return v * scale;
}

bool Budget::reserve(double worst_case) {
  if (worst_case > left() + 1e-9) return false;
  in_flight_ += worst_case;
  return true;
}

void Budget::settle(double worst_case, double used) {
  in_flight_ -= worst_case;
  if (in_flight_ < 0) in_flight_ = 0;
  spent_ += used;
}

}  // namespace attune::campaign
