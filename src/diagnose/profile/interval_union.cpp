#include "interval_union.h"

#include <algorithm>

namespace attune::diagnose::profile {

void merge_intervals(std::vector<Interval>& intervals) {
  std::erase_if(intervals, [](const Interval& i) { return i.end <= i.start; });
  std::sort(intervals.begin(), intervals.end(),
            [](const Interval& x, const Interval& y) { return x.start < y.start; });
  std::size_t out = 0;
  for (const Interval& i : intervals) {
    if (out > 0 && i.start <= intervals[out - 1].end) {
      intervals[out - 1].end = std::max(intervals[out - 1].end, i.end);
    } else {
      intervals[out++] = i;
    }
  }
  intervals.resize(out);
}

std::int64_t union_length(const std::vector<Interval>& merged) {
  std::int64_t total = 0;
  for (const Interval& i : merged) total += i.end - i.start;
  return total;
}

// Two pointers: advance whichever interval ends first.
std::int64_t intersection_length(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  std::int64_t total = 0;
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const std::int64_t lo = std::max(a[i].start, b[j].start);
    const std::int64_t hi = std::min(a[i].end, b[j].end);
    if (lo < hi) total += hi - lo;
    if (a[i].end < b[j].end) {
      ++i;
    } else {
      ++j;
    }
  }
  return total;
}

std::vector<Interval> union_of(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  std::vector<Interval> all;
  all.reserve(a.size() + b.size());
  std::merge(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(all),
             [](const Interval& x, const Interval& y) { return x.start < y.start; });
  merge_intervals(all);
  return all;
}

}  // namespace attune::diagnose::profile
