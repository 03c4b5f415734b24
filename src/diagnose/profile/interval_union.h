// Interval unions: the arithmetic behind compute/communication overlap. A GPU
// runs kernels on several streams at once, so time "spent in compute" is the
// length of the union of compute-kernel intervals, and hidden communication
// is the length of the intersection of two such unions (HTA's definitions).
#pragma once

#include <cstdint>
#include <vector>

namespace attune::diagnose::profile {

// Half-open [start, end) in nanoseconds.
struct Interval {
  std::int64_t start = 0;
  std::int64_t end = 0;
};

// Sorts and merges overlapping or touching intervals in place; the result is
// sorted and disjoint ("merged"). Empty and inverted intervals are dropped.
void merge_intervals(std::vector<Interval>& intervals);

// Total length of merged intervals.
std::int64_t union_length(const std::vector<Interval>& merged);

// Length of the time covered by both merged lists.
std::int64_t intersection_length(const std::vector<Interval>& a, const std::vector<Interval>& b);

// The merged union of two merged lists.
std::vector<Interval> union_of(const std::vector<Interval>& a, const std::vector<Interval>& b);

}  // namespace attune::diagnose::profile
