// utc_now_iso: the time now as journals record it, "2026-12-03T16:21:49Z"
// (UTC, whole seconds): what a campaign's and a run's journal write as "at".
#pragma once

#include <string>

namespace attune {

std::string utc_now_iso();

}  // namespace attune
