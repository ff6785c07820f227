// Host-side compiler pieces that are not IR: shapes, configs, targets, inspect.
#include "sinter/Compiler/Config.h"
#include "sinter/Compiler/Inspect.h"
#include "sinter/Compiler/Target.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

namespace {

std::string writeTemp(const std::string &name, const std::string &text) {
  std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

TEST(ParseShape, AcceptsPositiveDims) {
  std::vector<int64_t> shape;
  std::string error;
  ASSERT_TRUE(sinter::parseShape("1x128", shape, error));
  EXPECT_EQ(shape, (std::vector<int64_t>{1, 128}));
  ASSERT_TRUE(sinter::parseShape("7", shape, error));
  EXPECT_EQ(shape, (std::vector<int64_t>{7}));
}

TEST(ParseShape, RejectsMalformed) {
  std::vector<int64_t> shape;
  for (const char *bad : {"", "x", "1x", "x1", "1x0", "1x-2", "1xa", "1x2x", "99999999999999999999"}) {
    std::string error;
    EXPECT_FALSE(sinter::parseShape(bad, shape, error)) << bad;
    EXPECT_NE(error.find("invalid shape"), std::string::npos) << bad;
  }
}

TEST(Config, ReadsEveryKey) {
  std::string path = writeTemp("ok.yaml", "precision: tf32\nmerge_lora: false\ntarget: h100\n"
                                          "weights: embedded\nshapes:\n  input_ids: 1x128\n"
                                          "dtype: f16\nsample: true\nlast_logits: true\n"
                                          "weight_dtype: fp8\n");
  sinter::CompileConfig config;
  std::string error;
  ASSERT_TRUE(sinter::loadConfigFile(path, config, error)) << error;
  EXPECT_EQ(config.precision, "tf32");
  EXPECT_FALSE(config.mergeLora);
  EXPECT_EQ(config.target, "h100");
  EXPECT_EQ(config.shapes.at("input_ids"), (std::vector<int64_t>{1, 128}));
  EXPECT_EQ(config.dtype, "f16");
  EXPECT_EQ(config.weightDtype, "fp8");
  EXPECT_TRUE(config.sample);
  EXPECT_TRUE(config.lastLogits);
}

TEST(Config, RejectsUnknownKeysAndValues) {
  struct Case {
    const char *text, *message;
  } cases[] = {{"fusion: 2\n", "unknown key 'fusion'"},
               {"precision: fp8\n", "precision must be strict or tf32"},
               {"weights: inline\n", "weights must be 'embedded' or 'external'"},
               {"weight_dtype: int8\n", "weight_dtype must be model, bf16, fp8 or int4"},
               {"shapes: 3\n", "shapes must map input names"},
               {"shapes:\n  x: 0x2\n", "invalid shape"},
               {"- a\n- b\n", "the config must be a mapping"},
               {"last_logits: maybe\n", "error"},
               {"precision: [\n", "error"}};
  for (const Case &c : cases) {
    sinter::CompileConfig config;
    std::string error;
    EXPECT_FALSE(sinter::loadConfigFile(writeTemp("bad.yaml", c.text), config, error)) << c.text;
    EXPECT_NE(error.find(c.message), std::string::npos) << c.text << " -> " << error;
  }
}

TEST(Target, LoadsTheShippedDescriptions) {
  for (const char *name : {"h200", "h100"}) {
    sinter::Target target;
    std::string error;
    ASSERT_TRUE(sinter::loadTarget(SINTER_TARGETS_DIR, name, target, error)) << error;
    EXPECT_EQ(target.name, name);
    EXPECT_EQ(target.arch, "sm_90");
    EXPECT_EQ(target.smCount, 132);
    EXPECT_GT(target.memoryBandwidthGBps, 1000);
  }
}

TEST(Target, RejectsMissingAndUnknownKeys) {
  sinter::Target target;
  std::string error;
  EXPECT_FALSE(sinter::parseTargetFile(writeTemp("t.yaml", "name: x\narch: sm_90\n"), target, error));
  EXPECT_NE(error.find("missing key"), std::string::npos) << error;
  EXPECT_FALSE(sinter::loadTarget(SINTER_TARGETS_DIR, "../etc", target, error));
  EXPECT_NE(error.find("invalid target name"), std::string::npos) << error;
  EXPECT_FALSE(sinter::loadTarget(SINTER_TARGETS_DIR, "nope", target, error));
  EXPECT_NE(error.find("unknown target 'nope'"), std::string::npos) << error;
}

TEST(Inspect, RejectsFilesThatAreNotModels) {
  std::string json, error;
  EXPECT_FALSE(sinter::readInspectJson(writeTemp("plain.txt", "hello"), json, error));
  EXPECT_NE(error.find("not an ELF file"), std::string::npos) << error;
  // An ELF header whose section table points past the end of the file.
  std::string elf(64, '\0');
  elf[0] = 0x7f, elf[1] = 'E', elf[2] = 'L', elf[3] = 'F', elf[4] = 2;
  elf[40] = 0x10; // e_shoff = 16 (little endian), far too small for a table of entries
  elf[58] = 64;   // e_shentsize
  elf[60] = 200;  // e_shnum
  EXPECT_FALSE(sinter::readInspectJson(writeTemp("trunc.so", elf), json, error));
  EXPECT_NE(error.find("truncated section table"), std::string::npos) << error;
  EXPECT_FALSE(sinter::readInspectJson(::testing::TempDir() + "missing.so", json, error));
  EXPECT_NE(error.find("cannot read"), std::string::npos) << error;
}

TEST(Inspect, ReportsCorruptDescriptions) {
  std::string report, error;
  EXPECT_FALSE(sinter::formatInspectReport("{not json", report, error));
  EXPECT_NE(error.find("corrupt model description"), std::string::npos);
  ASSERT_TRUE(sinter::formatInspectReport(
      R"({"model":"m","target":"h200","arch":"sm_90","abi_version":"1.0","inputs":[],)"
      R"("outputs":[],"launches":[],"arena_bytes":0,"weight_bytes":4})",
      report, error));
  EXPECT_NE(report.find("launches: 0"), std::string::npos) << report;
}

TEST(Inspect, PairsFp8WeightsWithTheirRowScales) {
  std::string report, error;
  ASSERT_TRUE(sinter::formatInspectReport(
      R"({"model":"m","target":"h200","arch":"sm_90","abi_version":"1.4","weights":"embedded",)"
      R"("arena_bytes":0,"weight_bytes":1280,"weight_dtype":"fp8","launches":[],"weight_tensors":[)"
      R"({"name":"w0.fp8","dtype":"f8E4M3FN","shape":[16,64],"sources":["w"],)"
      R"("row_scales":["w0.fp8_scale"]},)"
      R"({"name":"w0.fp8_scale","dtype":"f32","shape":[16],"sources":["w"],)"
      R"("scale_of":["w0.fp8"]}]})",
      report, error))
      << error;
  EXPECT_NE(report.find("  weight dtype: fp8 (--weight-dtype)\n"), std::string::npos) << report;
  EXPECT_NE(report.find("weight \"w0.fp8\" \"f8E4M3FN\" [16,64] from [\"w\"] scale "
                        "\"w0.fp8_scale\" per output row\n"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("weight \"w0.fp8_scale\" \"f32\" [16] from [\"w\"] row scales of "
                        "\"w0.fp8\"\n"),
            std::string::npos)
      << report;
  // Libraries without fp8 weights (or from before --weight-dtype) print neither.
  report.clear();
  ASSERT_TRUE(sinter::formatInspectReport(
      R"({"model":"m","weight_dtype":"model","weight_tensors":[{"name":"w0","dtype":"bf16"}]})",
      report, error));
  EXPECT_EQ(report.find("weight dtype"), std::string::npos) << report;
  EXPECT_EQ(report.find("scale"), std::string::npos) << report;
}

TEST(Config, ReadsInt4WeightDtype) {
  std::string path = writeTemp("int4.yaml", "weight_dtype: int4\n");
  sinter::CompileConfig config;
  std::string error;
  ASSERT_TRUE(sinter::loadConfigFile(path, config, error)) << error;
  EXPECT_EQ(config.weightDtype, "int4");
  EXPECT_TRUE(sinter::isWeightDtype("int4"));
  EXPECT_FALSE(sinter::isWeightDtype("int8"));
}

TEST(Inspect, ShowsInt4WeightsWithTheirGroupScales) {
  std::string report, error;
  ASSERT_TRUE(sinter::formatInspectReport(
      R"({"model":"m","target":"h200","arch":"sm_90","abi_version":"1.4","weights":"embedded",)"
      R"("arena_bytes":0,"weight_bytes":1280,"weight_dtype":"int4","launches":[],"weight_tensors":[)"
      R"({"name":"w0.int4","dtype":"ui8","shape":[16,128],"sources":["w"],"values":"int4",)"
      R"("group_scales":["w0.int4_scale"],"scale_layout":"row_group","group_size":128},)"
      R"({"name":"w0.int4_scale","dtype":"f32","shape":[16,2],"sources":["w"],)"
      R"("scale_of":["w0.int4"],"scale_layout":"row_group","group_size":128},)"
      R"({"name":"w1.fp8","dtype":"f8E4M3FN","shape":[16,64],"sources":["v"],)"
      R"("row_scales":["w1.fp8_scale"],"scale_layout":"row"},)"
      R"({"name":"w1.fp8_scale","dtype":"f32","shape":[16],"sources":["v"],)"
      R"("scale_of":["w1.fp8"],"scale_layout":"row"}]})",
      report, error))
      << error;
  EXPECT_NE(report.find("  weight dtype: int4 (--weight-dtype)\n"), std::string::npos) << report;
  EXPECT_NE(report.find("weight \"w0.int4\" \"ui8\" [16,128] from [\"w\"] int4 two per byte, "
                        "symmetric (q - 8), scale \"w0.int4_scale\" per output row and group "
                        "of 128 k\n"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("weight \"w0.int4_scale\" \"f32\" [16,2] from [\"w\"] group scales "
                        "(128 k) of \"w0.int4\"\n"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("weight \"w1.fp8\" \"f8E4M3FN\" [16,64] from [\"v\"] scale "
                        "\"w1.fp8_scale\" per output row\n"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("weight \"w1.fp8_scale\" \"f32\" [16] from [\"v\"] row scales of "
                        "\"w1.fp8\"\n"),
            std::string::npos)
      << report;
}

TEST(Inspect, TellsExternalWeights) {
  EXPECT_TRUE(sinter::describesExternalWeights(R"({"weights": "external"})"));
  EXPECT_TRUE(sinter::describesExternalWeights("{\n  \"weights\":\"external\"\n}"));
  EXPECT_FALSE(sinter::describesExternalWeights(R"({"weights": "embedded"})"));
  EXPECT_FALSE(sinter::describesExternalWeights(R"({"model": "weights: external"})"));
  EXPECT_FALSE(sinter::describesExternalWeights("not json"));
}

} // namespace
