#include "attune/diagnose/profile.h"

#include "attune/util/chunked_file.h"
#include "profile_stream.h"

namespace attune::diagnose {
namespace {

nlohmann::json optional_json(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

nlohmann::json optional_json(const std::optional<int>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

}  // namespace

ProfileSummary read_profile(const std::string& path) {
  profile::ProfileStreamReader reader(path);
  read_file_chunks(path, "profile", [&reader](std::string_view chunk) { reader.feed(chunk); });
  return reader.finish();
}

ProfileSummary read_profile_text(std::string_view text, const std::string& name_for_errors) {
  // Fed in chunks like a file, so the reader never copies the whole text.
  profile::ProfileStreamReader reader(name_for_errors);
  for (std::size_t i = 0; i < text.size(); i += kFileChunkBytes) reader.feed(text.substr(i, kFileChunkBytes));
  return reader.finish();
}

nlohmann::json to_json(const ProfileSummary& p) {
  nlohmann::json top = nlohmann::json::array();
  for (const TopKernel& k : p.top_kernels) {
    top.push_back({{"name", k.name}, {"kind", k.kind}, {"total_s", k.total_s}, {"count", k.count},
                   {"share", k.share}});
  }
  return {
      {"source", p.source},
      {"window_s", optional_json(p.window_s)},
      {"compute_s", p.compute_s},
      {"communication_s", p.communication_s},
      {"memory_s", p.memory_s},
      {"exposed_communication_s", optional_json(p.exposed_communication_s)},
      {"idle_s", optional_json(p.idle_s)},
      {"overlap_pct", optional_json(p.overlap_pct)},
      {"shares",
       {{"basis", p.share_basis},
        {"compute", optional_json(p.compute_share)},
        {"communication", optional_json(p.communication_share)},
        {"memory", optional_json(p.memory_share)},
        {"exposed_communication", optional_json(p.exposed_communication_share)},
        {"idle", optional_json(p.idle_share)}}},
      {"steps", optional_json(p.steps)},
      {"devices", optional_json(p.devices)},
      {"kernel_launches", p.kernel_launches},
      {"summed_kernel_s", p.summed_kernel_s},
      {"top_kernels", top},
      {"notes", p.notes},
  };
}

}  // namespace attune::diagnose
