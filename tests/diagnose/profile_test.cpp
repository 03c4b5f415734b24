// Profile readers: Kineto Chrome traces (streamed), nsys stats CSV / text,
// kernel classification and the interval arithmetic. Fixtures are written
// here, with the expected numbers worked out by hand next to them.
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "../../src/diagnose/profile/decimal.h"
#include "../../src/diagnose/profile/interval_union.h"
#include "../../src/diagnose/profile/kernel_kind.h"
#include "../../src/diagnose/profile/profile_stream.h"
#include "attune/diagnose/profile.h"
#include "attune/util/error.h"

namespace attune::diagnose {
namespace {

using profile::classify_kernel;
using profile::Interval;
using profile::KernelKind;

constexpr double kUs = 1e-6;

// One device, times in µs after 1000000 (a fractional-free epoch-ish base):
//   gemm (compute)                      [  0, 100)
//   ncclKernel_AllReduce (old NCCL)     [ 50, 150)   overlaps gemm by 50
//   -- idle --                          [150, 200)
//   Memcpy HtoD (gpu_memcpy)            [200, 210)
//   ncclDevKernel_AllGather (new NCCL)  [210, 260)
//   gemm (compute)                      [240, 300)   overlaps AllGather by 20
//   deep_ep dispatch (DeepEP)           [300, 320)
// window 320; compute ∪ = 160; comm ∪ = 100+50+20 = 170; memory 10;
// comm ∩ compute = 50+20 = 70 → exposed 100, overlap 41.18 %;
// all ∪ = [0,150) + [200,320) = 270 → idle 50.
// Keys come in several orders; CPU ops, runtime calls, flows, a GPU-side
// annotation, metadata and a string-pid span must all be ignored.
const char* const kTrace = R"json({
  "schemaVersion": 1,
  "deviceProperties": [{"id": 0, "name": "NVIDIA H100", "numSms": 132, "nested": {"a": [1, {"b": "}"}]}}],
  "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 8},
  "traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 11, "tid": 11, "ts": 999990, "dur": 5,
   "args": {"External id": 1, "Input Dims": [[4, 4], [4, 4]], "Input type": ["float", "float"]}},
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", "pid": 11, "tid": 11, "ts": 999980, "dur": 200},
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#4", "pid": 11, "tid": 11, "ts": 1000180, "dur": 200},
  {"ph": "X", "cat": "gpu_user_annotation", "name": "ProfilerStep#3", "pid": 0, "tid": 7, "ts": 1000000, "dur": 320},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 11, "tid": 11, "ts": 999995, "dur": 3,
   "args": {"cbid": 211, "correlation": 5}},
  {"ph": "s", "id": 5, "pid": 11, "tid": 11, "ts": 999995, "cat": "ac2g", "name": "ac2g"},
  {"ph": "f", "id": 5, "pid": 0, "tid": 7, "ts": 1000000, "cat": "ac2g", "name": "ac2g", "bp": "e"},
  {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 1000000, "dur": 100,
   "args": {"device": 0, "stream": 7, "grid": [4096, 1, 1], "block": [128, 1, 1], "est. achieved occupancy %": 100}},
  {"args": {"stream": 20}, "dur": 100, "ts": 1000050, "tid": 20, "pid": 0,
   "name": "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", "cat": "kernel", "ph": "X"},
  {"name": "Memcpy HtoD (Pageable -> Device)", "ph": "X", "pid": 0, "tid": 7, "cat": "gpu_memcpy",
   "ts": 1000200, "dur": 10, "args": {"bytes": 1048576, "memory bandwidth (GB/s)": 1.05e+02}},
  {"ts": 1000210, "ph": "X", "cat": "kernel", "pid": 0, "tid": 20, "dur": 50,
   "name": "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)"},
  {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 1000240, "dur": 60},
  {"ph": "X", "cat": "kernel", "pid": 0, "tid": 21, "ts": 1000300, "dur": 20,
   "name": "void deep_ep::internode::dispatch<true, 8, 768>(int4*, float*, int const*, int)"},
  {"ph": "X", "cat": "Trace", "ts": 999900, "dur": 500, "pid": "Spans", "tid": "PyTorch Profiler",
   "name": "PyTorch Profiler (0)", "args": {"Op count": 0}},
  {"name": "process_name", "ph": "M", "ts": 999900, "pid": 0, "tid": 0, "args": {"name": "python3"}}
  ],
  "traceName": "traces/rank0.json"
})json";

ProfileSummary read_in_chunks(std::string_view text, std::size_t chunk) {
  profile::ProfileStreamReader reader("chunked.json");
  for (std::size_t i = 0; i < text.size(); i += chunk) reader.feed(text.substr(i, chunk));
  return reader.finish();
}

void expect_trace_summary(const ProfileSummary& p) {
  EXPECT_EQ(p.source, "chrome_trace");
  ASSERT_TRUE(p.window_s.has_value());
  EXPECT_NEAR(*p.window_s, 320 * kUs, 1e-12);
  EXPECT_NEAR(p.compute_s, 160 * kUs, 1e-12);
  EXPECT_NEAR(p.communication_s, 170 * kUs, 1e-12);
  EXPECT_NEAR(p.memory_s, 10 * kUs, 1e-12);
  ASSERT_TRUE(p.exposed_communication_s && p.idle_s && p.overlap_pct);
  EXPECT_NEAR(*p.exposed_communication_s, 100 * kUs, 1e-12);
  EXPECT_NEAR(*p.idle_s, 50 * kUs, 1e-12);
  EXPECT_NEAR(*p.overlap_pct, 100.0 * 70 / 170, 1e-9);
  EXPECT_EQ(p.share_basis, "window");
  EXPECT_NEAR(p.compute_share.value_or(-1), 0.5, 1e-12);
  EXPECT_NEAR(p.communication_share.value_or(-1), 170.0 / 320, 1e-12);
  EXPECT_NEAR(p.idle_share.value_or(-1), 50.0 / 320, 1e-12);
  EXPECT_NEAR(p.exposed_communication_share.value_or(-1), 100.0 / 320, 1e-12);
  EXPECT_EQ(p.steps, 2);
  EXPECT_EQ(p.devices, 1);
  EXPECT_EQ(p.kernel_launches, 6);
  EXPECT_NEAR(p.summed_kernel_s, 340 * kUs, 1e-12);
  ASSERT_EQ(p.top_kernels.size(), 5u);
  EXPECT_EQ(p.top_kernels[0].name, "gemm");
  EXPECT_EQ(p.top_kernels[0].kind, "compute");
  EXPECT_EQ(p.top_kernels[0].count, 2);
  EXPECT_NEAR(p.top_kernels[0].total_s, 160 * kUs, 1e-12);
  EXPECT_NEAR(p.top_kernels[0].share, 160.0 / 340, 1e-12);
  EXPECT_EQ(p.top_kernels[1].name, "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)");
  EXPECT_EQ(p.top_kernels[1].kind, "communication");
  EXPECT_EQ(p.top_kernels[2].kind, "communication");  // ncclDevKernel_AllGather
  EXPECT_EQ(p.top_kernels[3].kind, "communication");  // deep_ep dispatch
  EXPECT_EQ(p.top_kernels[4].name, "Memcpy HtoD (Pageable -> Device)");
  EXPECT_EQ(p.top_kernels[4].kind, "memory");
}

TEST(ProfileChromeTrace, ComputeCommunicationOverlapAndIdle) {
  expect_trace_summary(read_profile_text(kTrace, "trace.json"));
}

TEST(ProfileChromeTrace, ChunkBoundariesDoNotMatter) {
  for (std::size_t chunk : {1, 2, 3, 7, 64, 1000}) {
    SCOPED_TRACE(chunk);
    expect_trace_summary(read_in_chunks(kTrace, chunk));
  }
}

TEST(ProfileChromeTrace, EscapesFractionsAndExponents) {
  // \" and \u00b5 (µ) in a name; ts/dur fractional and with exponents;
  // an escaped quote and brace inside args must not end the event early.
  const char* text = R"json({"traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "void k<\"q\">\u00b5\ud83d\ude00", "pid": 0, "ts": 1.5, "dur": 0.25,
     "args": {"note": "a \"}\" b\\"}},
    {"ph": "X", "cat": "kernel", "name": "void k<\"q\">\u00b5\ud83d\ude00", "pid": 0, "ts": 1e1, "dur": 2.5E-1}
  ]})json";
  const ProfileSummary p = read_profile_text(text, "esc.json");
  ASSERT_EQ(p.top_kernels.size(), 1u);
  EXPECT_EQ(p.top_kernels[0].name, "void k<\"q\">\xC2\xB5\xF0\x9F\x98\x80");
  EXPECT_EQ(p.top_kernels[0].count, 2);
  EXPECT_NEAR(p.compute_s, 0.5 * kUs, 1e-15);       // [1.5,1.75) + [10,10.25)
  EXPECT_NEAR(p.window_s.value_or(0), 8.75 * kUs, 1e-15);  // 1.5 → 10.25
}

TEST(ProfileChromeTrace, DevicesAreMeasuredApartThenAveraged) {
  // GPU 0: compute [0,100). GPU 1: compute [0,50), nccl [0,100).
  // Averages: window 100, compute 75, comm 50, exposed (100−50)/2 = 25, idle 0;
  // overlap 50 of 100 µs of communication.
  const char* text = R"json({"traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "ts": 0, "dur": 100},
    {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 1, "ts": 0, "dur": 50},
    {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_bf16_RING_LL", "pid": 1, "ts": 0, "dur": 100}
  ]})json";
  const ProfileSummary p = read_profile_text(text, "two.json");
  EXPECT_EQ(p.devices, 2);
  EXPECT_NEAR(p.window_s.value_or(0), 100 * kUs, 1e-12);
  EXPECT_NEAR(p.compute_s, 75 * kUs, 1e-12);
  EXPECT_NEAR(p.communication_s, 50 * kUs, 1e-12);
  EXPECT_NEAR(p.exposed_communication_s.value_or(-1), 25 * kUs, 1e-12);
  EXPECT_NEAR(p.idle_s.value_or(-1), 0, 1e-12);
  EXPECT_NEAR(p.overlap_pct.value_or(-1), 50, 1e-9);
}

TEST(ProfileChromeTrace, ArrayFormatAndMissingTimesAreSkipped) {
  // Chrome's array format may omit the closing bracket; a kernel without a
  // duration cannot be placed in time.
  const char* text = R"json([{"ph": "X", "cat": "kernel", "name": "a", "pid": 0, "ts": 0, "dur": 10},
                         {"ph": "X", "cat": "kernel", "name": "b", "pid": 0, "ts": 5})json";
  const ProfileSummary p = read_profile_text(text, "array.json");
  EXPECT_EQ(p.kernel_launches, 1);
  EXPECT_FALSE(p.steps.has_value());
  EXPECT_FALSE(p.overlap_pct.has_value());  // no communication at all
  ASSERT_FALSE(p.notes.empty());
}

TEST(ProfileChromeTrace, ToJsonHasNullsForWhatIsUnknown) {
  const nlohmann::json j = to_json(read_profile_text(kTrace, "trace.json"));
  EXPECT_EQ(j["source"], "chrome_trace");
  EXPECT_EQ(j["steps"], 2);
  EXPECT_EQ(j["top_kernels"].size(), 5u);
  EXPECT_EQ(j["shares"]["basis"], "window");
  const nlohmann::json k = to_json(read_profile_text("Total Time (ns),Instances,Name\n5,1,x\n", "k.csv"));
  EXPECT_TRUE(k["window_s"].is_null());
  EXPECT_TRUE(k["overlap_pct"].is_null());
  EXPECT_TRUE(k["devices"].is_null());
}

// Totals only: gemm 600 µs + odd-name 100 µs compute, NCCL 300 µs.
// BOM, CRLF, blank lines, quoted names with commas and doubled quotes.
const char* const kKernSumCsv =
    "\xEF\xBB\xBFTime (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\r\n"
    "60.0,600000,3,200000.0,200000.0,190000,210000,10000.0,\"void gemm<float, 128>(float const*, int)\"\r\n"
    "\r\n"
    "30.0,300000,2,150000.0,150000.0,140000,160000,10000.0,"
    "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)\r\n"
    "10.0,100000,1,100000.0,100000.0,100000,100000,0.0,\"void k<\"\"x\"\">()\"\r\n";

TEST(ProfileNsysStats, KernSumCsvGivesTotalsOnly) {
  const ProfileSummary p = read_profile_text(kKernSumCsv, "kern_sum.csv");
  EXPECT_EQ(p.source, "nsys_kern_sum");
  EXPECT_NEAR(p.compute_s, 700 * kUs, 1e-12);
  EXPECT_NEAR(p.communication_s, 300 * kUs, 1e-12);
  EXPECT_NEAR(p.summed_kernel_s, 1000 * kUs, 1e-12);
  EXPECT_EQ(p.share_basis, "summed_kernel_time");
  EXPECT_NEAR(p.communication_share.value_or(0), 0.3, 1e-12);
  EXPECT_FALSE(p.window_s || p.idle_s || p.overlap_pct || p.exposed_communication_s || p.devices);
  EXPECT_EQ(p.kernel_launches, 6);
  ASSERT_EQ(p.top_kernels.size(), 3u);
  EXPECT_EQ(p.top_kernels[0].name, "void gemm<float, 128>(float const*, int)");
  EXPECT_NEAR(p.top_kernels[0].share, 0.6, 1e-12);
  EXPECT_EQ(p.top_kernels[2].name, "void k<\"x\">()");
  ASSERT_FALSE(p.notes.empty());
  EXPECT_NE(p.notes[0].find("no timestamps"), std::string::npos);
}

TEST(ProfileNsysStats, KernSumCsvInChunks) {
  const ProfileSummary p = read_in_chunks(kKernSumCsv, 5);
  EXPECT_NEAR(p.compute_s, 700 * kUs, 1e-12);
}

TEST(ProfileNsysStats, KernSumStdoutTableAfterOtherReports) {
  // The cuda_api_sum table has the same kind of columns: it must be skipped.
  const char* text =
      "Generating SQLite file report.sqlite from report.nsys-rep\n"
      "Processing [report.sqlite] with [/opt/nsys/reports/cuda_api_sum.py]... \n"
      "\n"
      " ** CUDA API Summary (cuda_api_sum):\n"
      "\n"
      " Time (%)  Total Time (ns)  Num Calls  Avg (ns)  Med (ns)  Min (ns)  Max (ns)  StdDev (ns)  Name\n"
      " --------  ---------------  ---------  --------  --------  --------  --------  -----------  ----\n"
      "     99.0    9,000,000,000         10     900.0     900.0       900       900          0.0  cudaLaunchKernel\n"
      "\n"
      "Processing [report.sqlite] with [/opt/nsys/reports/cuda_gpu_kern_sum.py]... \n"
      "\n"
      " ** CUDA GPU Kernel Summary (cuda_gpu_kern_sum):\n"
      "\n"
      " Time (%)  Total Time (ns)  Instances   Avg (ns)    Med (ns)   Min (ns)   Max (ns)   StdDev (ns)  Name\n"
      " --------  ---------------  ---------  ----------  ---------  ---------  ---------  -----------  ------------------------\n"
      "     75.0        3,000,000         10   300,000.0  300,000.0    290,000    310,000      1,000.0  void gemm<float, 128>(float const*, int)\n"
      "     25.0        1,000,000          4   250,000.0  250,000.0    240,000    260,000      1,000.0  void tensorrt_llm::kernels::oneShotAllReduceKernel<float, 8>(AllReduceParams)\n"
      "\n"
      "Processing [report.sqlite] with [/opt/nsys/reports/nvtx_sum.py]... \n"
      "SKIPPED: report.sqlite does not contain NV Tools Extension (NVTX) data.\n";
  const ProfileSummary p = read_profile_text(text, "stats.txt");
  EXPECT_EQ(p.source, "nsys_kern_sum");
  EXPECT_NEAR(p.compute_s, 3e-3, 1e-12);
  EXPECT_NEAR(p.communication_s, 1e-3, 1e-12);
  EXPECT_EQ(p.kernel_launches, 14);
  ASSERT_EQ(p.top_kernels.size(), 2u);
  EXPECT_EQ(p.top_kernels[0].name, "void gemm<float, 128>(float const*, int)");
  EXPECT_EQ(p.top_kernels[1].kind, "communication");
}

TEST(ProfileNsysStats, GpuTraceCsvMeasuresOverlap) {
  // gemm [0,100) µs, NCCL [50,150), memcpy [200,210): window 210, union
  // 150 + 10 → idle 50; overlap 50 of 100 µs of communication.
  const char* text =
      "Start (ns),Duration (ns),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,StcSMem (MB),DymSMem (MB),"
      "Bytes (MB),Throughput (MBps),SrcMemKd,DstMemKd,Device,Ctx,GreenCtx,Strm,Name\n"
      "1000000,100000,1,4096,1,1,128,1,1,31,0.000,0.000,,,,,NVIDIA H100 80GB HBM3 (0),1,,7,"
      "\"void gemm<float, 128>(float const*, int)\"\n"
      "1050000,100000,2,2,1,1,640,1,1,96,0.000,0.000,,,,,NVIDIA H100 80GB HBM3 (0),1,,20,"
      "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)\n"
      "1200000,10000,3,,,,,,,,,,1.049,100.000,Pageable,Device,NVIDIA H100 80GB HBM3 (0),1,,7,"
      "[CUDA memcpy Host-to-Device]\n";
  const ProfileSummary p = read_profile_text(text, "trace.csv");
  EXPECT_EQ(p.source, "nsys_gpu_trace");
  EXPECT_EQ(p.devices, 1);
  EXPECT_NEAR(p.window_s.value_or(0), 210 * kUs, 1e-12);
  EXPECT_NEAR(p.compute_s, 100 * kUs, 1e-12);
  EXPECT_NEAR(p.communication_s, 100 * kUs, 1e-12);
  EXPECT_NEAR(p.memory_s, 10 * kUs, 1e-12);
  EXPECT_NEAR(p.idle_s.value_or(-1), 50 * kUs, 1e-12);
  EXPECT_NEAR(p.exposed_communication_s.value_or(-1), 50 * kUs, 1e-12);
  EXPECT_NEAR(p.overlap_pct.value_or(-1), 50, 1e-9);
}

TEST(ProfileNsysStats, GpuTraceTextTableAsksForCsv) {
  const char* text =
      " ** CUDA GPU Trace (cuda_gpu_trace):\n\n"
      " Start (ns)  Duration (ns)  CorrId  Device  Strm  Name\n"
      " ----------  -------------  ------  ------  ----  ----\n";
  try {
    read_profile_text(text, "trace.txt");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().line, 3);
    EXPECT_NE(e.message().find("--format csv"), std::string::npos);
  }
}

TEST(ProfileErrors, MalformedInputsAreInputErrors) {
  const char* bad[] = {
      "",
      " \n\t ",
      "\xEF\xBB\xBF",
      "{",
      "{\"traceEvents\": [",
      "{\"traceEvents\": [{\"ph\": \"X\", \"dur\": }]}",
      "{\"traceEvents\": [{\"ph\" \"X\"}]}",
      "{\"traceEvents\": [{\"ph\": \"X\"} {\"ph\": \"X\"}]",
      "{\"traceEvents\": {}}",
      "{\"traceEvents\": []} trailing",
      "{\"schemaVersion\": 1}",
      "{\"a\": }",
      "[1, 2",
      "[{\"name\": \"unterminated",
      "{\"traceEvents\": [{\"name\": \"x\\\"}]}",
      "just some text\nthat is not a profile\n",
      "Total Time (ns),Instances,Name\n12,abc,k\n",
      "Total Time (ns),Instances,Name\n12,1,\"k\n",
      "Total Time (ns),Instances,Name\n12,1,a,b\n",
  };
  for (const char* text : bad) {
    SCOPED_TRACE(text);
    EXPECT_THROW(read_profile_text(text, "bad.json"), InputError);
  }
}

TEST(ProfileErrors, ErrorNamesFileAndLine) {
  try {
    read_profile_text("{\n \"traceEvents\": [\n  {\"ph\" \"X\"}\n ]\n}\n", "rank0.json");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().file, "rank0.json");
    EXPECT_EQ(e.where().line, 3);
  }
}

TEST(ProfileErrors, DeepNestingAndRandomDamageNeverCrash) {
  std::string deep = "{\"traceEvents\": [{\"args\": ";
  deep += std::string(100000, '[') + std::string(100000, ']') + "}]}";
  EXPECT_NO_THROW(read_profile_text(deep, "deep.json"));
  // Byte flips and truncations of a valid trace: a summary or an InputError.
  std::mt19937 rng(12345);
  const std::string base = kTrace;
  for (int round = 0; round < 300; ++round) {
    std::string t = base;
    for (int k = 0; k < 3; ++k) t[rng() % t.size()] = static_cast<char>(rng() % 256);
    if (round % 3 == 0) t.resize(rng() % t.size());
    try {
      read_in_chunks(t, 1 + rng() % 97);
    } catch (const InputError&) {
    }
  }
}

class ProfileFile : public ::testing::Test {
 protected:
  std::string path(const std::string& name) {
    return (std::filesystem::temp_directory_path() /
            ("attune_profile_test_" + std::to_string(::getpid()) + "_" + name))
        .string();
  }
  void TearDown() override {
    for (const auto& p : made_) std::filesystem::remove(p);
  }
  std::string write(const std::string& name, const std::string& bytes) {
    const std::string p = path(name);
    std::ofstream(p, std::ios::binary) << bytes;
    made_.push_back(p);
    return p;
  }
  std::vector<std::string> made_;
};

TEST_F(ProfileFile, PlainAndGzipReadTheSame) {
  expect_trace_summary(read_profile(write("trace.json", kTrace)));
  const std::string gz = path("trace.json.gz");
  made_.push_back(gz);
  gzFile f = gzopen(gz.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  gzwrite(f, kTrace, static_cast<unsigned>(std::strlen(kTrace)));
  gzclose(f);
  expect_trace_summary(read_profile(gz));
}

TEST_F(ProfileFile, EmptyAndMissingFilesNameTheFile) {
  const std::string empty = write("empty.json", "");
  try {
    read_profile(empty);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.where().file, empty);
    EXPECT_NE(e.message().find("empty"), std::string::npos);
  }
  EXPECT_THROW(read_profile(path("does-not-exist.json")), InputError);
}

TEST(ProfileKernelKind, CommunicationLibrariesAreRecognised) {
  for (const char* name : {
           "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)",
           "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
           "void ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t<2, 0>(ncclDevComm*, unsigned long, ncclWork*)",
           "void dpsk::ep::internode::combine<false, 8, __nv_bfloat16, 8, 2, 16, 24>(int4*)",
           "void deep_ep::intranode::dispatch<8, 768, 8192>(int4*, float*)",
           "void deep_ep::internode::cached_notify<32>(int, int)",
           "void tensorrt_llm::kernels::oneShotAllReduceKernel<float, 8>(AllReduceParams)",
           "void tensorrt_llm::kernels::twoShotAllReduceKernel<half, 4>(AllReduceParams)",
           "userbuffers_fp16_sum_inplace_gpu_rr_rs(int, int, int, void**)",
           "hcclAllReduce",
       }) {
    EXPECT_EQ(classify_kernel(name), KernelKind::kCommunication) << name;
  }
}

TEST(ProfileKernelKind, CopiesAndComputeAreRecognised) {
  EXPECT_EQ(classify_kernel("Memcpy DtoD (Device -> Device)"), KernelKind::kMemory);
  EXPECT_EQ(classify_kernel("Memset (Device)"), KernelKind::kMemory);
  EXPECT_EQ(classify_kernel("[CUDA memcpy Host-to-Device]"), KernelKind::kMemory);
  EXPECT_EQ(classify_kernel("hipMemcpyAsync"), KernelKind::kMemory);
  EXPECT_EQ(classify_kernel("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64"),
            KernelKind::kCompute);
  EXPECT_EQ(classify_kernel("void deep_ep::layout::get_layout_kernel<256>(int*)"), KernelKind::kCompute);
  EXPECT_EQ(classify_kernel(""), KernelKind::kCompute);
}

TEST(ProfileIntervalUnion, MergeUnionIntersection) {
  std::vector<Interval> a{{50, 60}, {0, 10}, {5, 20}, {20, 30}, {40, 40}};
  profile::merge_intervals(a);
  ASSERT_EQ(a.size(), 2u);  // [0,30) and [50,60); the empty one dropped
  EXPECT_EQ(a[0].start, 0);
  EXPECT_EQ(a[0].end, 30);
  EXPECT_EQ(profile::union_length(a), 40);
  std::vector<Interval> b{{25, 55}};
  EXPECT_EQ(profile::intersection_length(a, b), 5 + 5);
  EXPECT_EQ(profile::union_length(profile::union_of(a, b)), 60);
  EXPECT_EQ(profile::intersection_length(a, {}), 0);
}

TEST(ProfileDecimal, ScalesExactly) {
  using profile::parse_scaled_decimal;
  EXPECT_EQ(parse_scaled_decimal("1740461679471346", 3), 1740461679471346000);
  EXPECT_EQ(parse_scaled_decimal("1740461679471346.125", 3), 1740461679471346125);
  EXPECT_EQ(parse_scaled_decimal("1.5", 3), 1500);
  EXPECT_EQ(parse_scaled_decimal("1e2", 3), 100000);
  EXPECT_EQ(parse_scaled_decimal("2.5E-1", 3), 250);
  EXPECT_EQ(parse_scaled_decimal("-3", 0), -3);
  EXPECT_EQ(parse_scaled_decimal("0.0004", 3), 0);
  EXPECT_FALSE(parse_scaled_decimal("", 0));
  EXPECT_FALSE(parse_scaled_decimal("1e400", 3));
  EXPECT_FALSE(parse_scaled_decimal("12abc", 0));
  EXPECT_FALSE(parse_scaled_decimal("-", 0));
  EXPECT_FALSE(parse_scaled_decimal("1e", 0));
}

}  // namespace
}  // namespace attune::diagnose
