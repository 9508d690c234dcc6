// Context::arg<T>(), through the runtime's ContextImpl over a FilterSpec's args.
#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/context_impl.h"
#include "sluice/error.h"

namespace sluice {
namespace {

class ContextArgsTest : public ::testing::Test {
 protected:
  ContextArgsTest() {
    spec_.name = "reader";
    spec_.args = {
        {"name", "words.txt"},  {"empty", ""},          {"t", "true"},
        {"f", "false"},         {"yes", "yes"},         {"no", "no"},
        {"one", "1"},           {"zero", "0"},          {"maybe", "maybe"},
        {"n", "42"},            {"minus1", "-1"},            {"neg", "-7"},
        {"big", "3000000000"},  {"huge", "99999999999999999999"},
        {"llmax", "9223372036854775807"},               {"u32max", "4294967295"},
        {"u32over", "4294967296"},                      {"kib", "64KiB"},
        {"mib", "1MiB"},        {"gib4", "4GiB"},       {"bytes", "100B"},
        {"badsize", "64KB"},    {"word", "abc"},        {"half", "2.5"},
        {"sci", "-1e3"},        {"rel", "data/words.txt"},
        {"abs", "/etc/words.txt"},                      {"dotdot", "../shared/x"},
        {"u64max", "18446744073709551615"},             {"u64over", "18446744073709551616"},
        {"plus", "+42"},        {"lead", " 42"},        {"trail", "42 "},
        {"nan", "nan"},         {"inf", "inf"},         {"fbig", "1e300"},
    };
  }

  ContextImpl& ctx() {
    if (!ctx_) ctx_ = std::make_unique<ContextImpl>(spec_, 0, "local", "/topo/dir");
    return *ctx_;
  }

  // The message of the sluice::Error that `f` throws ("" and a failure if none).
  template <typename F>
  std::string error_of(F&& f) {
    try {
      f();
    } catch (const Error& e) {
      return e.what();
    }
    ADD_FAILURE() << "did not throw";
    return "";
  }

  topo::FilterSpec spec_;
  std::unique_ptr<ContextImpl> ctx_;
};

::testing::AssertionResult Says(const std::string& message,
                                const std::vector<std::string>& words) {
  for (const std::string& w : words) {
    if (message.find(w) == std::string::npos) {
      return ::testing::AssertionFailure() << "[" << w << "] not in: " << message;
    }
  }
  return ::testing::AssertionSuccess();
}

// The keys a filter asked for, present or not, each once; and what is said of a key none of
// its copies asked for: the closest key they did ask for.
TEST(ContextArgs, AKeyNoCopyAskedForIsNamedWithTheClosestAskedOne) {
  topo::FilterSpec spec;
  spec.name = "scale";
  spec.class_name = "Scale";
  spec.args = {{"factr", "3"}, {"label", "x"}};
  ContextImpl ctx(spec, 0, "local", "/topo/dir");
  EXPECT_EQ(ctx.arg<double>("factor", 2.0), 2.0);
  EXPECT_EQ(ctx.arg<std::string>("label"), "x");
  EXPECT_EQ(ctx.arg<std::string>("label"), "x");
  EXPECT_EQ(ctx.asked_args(), (std::vector<std::string>{"factor", "label"}));
  EXPECT_EQ(unread_arg_message(spec, "factr", ctx.asked_args()),
            "args.factr (from the topology) was never read by Scale; did you mean 'factor'? (its copies asked for "
            "factor, label)");
  EXPECT_EQ(unread_arg_message(spec, "zzz", {}), "args.zzz (from the topology) was never read by Scale (its copies "
                                                 "asked for no argument)");
}

TEST_F(ContextArgsTest, Strings) {
  EXPECT_EQ(ctx().arg("name"), "words.txt");
  EXPECT_EQ(ctx().arg<std::string>("name"), "words.txt");
  EXPECT_EQ(ctx().arg("empty"), "");
  EXPECT_EQ(ctx().arg<std::string>("n"), "42");  // as written
  ASSERT_NE(ctx().find_arg("name"), nullptr);
  EXPECT_EQ(*ctx().find_arg("name"), "words.txt");
  EXPECT_EQ(ctx().find_arg("nope"), nullptr);
}

TEST_F(ContextArgsTest, Booleans) {
  EXPECT_TRUE(ctx().arg<bool>("t"));
  EXPECT_FALSE(ctx().arg<bool>("f"));
  EXPECT_TRUE(ctx().arg<bool>("yes"));
  EXPECT_FALSE(ctx().arg<bool>("no"));
  EXPECT_TRUE(ctx().arg<bool>("one"));
  EXPECT_FALSE(ctx().arg<bool>("zero"));
  EXPECT_TRUE(Says(error_of([&] { ctx().arg<bool>("maybe"); }),
                   {"filter 'reader'", "argument 'maybe'", "'maybe'", "boolean",
                    "fix it in the topology's args:"}));
  EXPECT_THROW(ctx().arg<bool>("empty"), Error);
  EXPECT_THROW(ctx().arg<bool>("n"), Error);
}

TEST_F(ContextArgsTest, SignedIntegers) {
  EXPECT_EQ(ctx().arg<int>("n"), 42);
  EXPECT_EQ(ctx().arg<int>("neg"), -7);
  EXPECT_EQ(ctx().arg<long>("neg"), -7L);
  EXPECT_EQ(ctx().arg<long long>("big"), 3000000000LL);
  EXPECT_EQ(ctx().arg<long>("llmax"), std::numeric_limits<long>::max());
  EXPECT_TRUE(Says(error_of([&] { ctx().arg<int>("big"); }),
                   {"filter 'reader'", "argument 'big'", "'3000000000'", "which is not an integer from -2147483648 to 2147483647"}));
  EXPECT_THROW(ctx().arg<long long>("huge"), Error);
  EXPECT_TRUE(Says(error_of([&] { ctx().arg<int>("word"); }),
                   {"argument 'word'", "'abc'", "an integer or a size such as 64KiB"}));
  EXPECT_THROW(ctx().arg<int>("half"), Error);
  EXPECT_THROW(ctx().arg<int>("empty"), Error);
}

TEST_F(ContextArgsTest, UnsignedIntegers) {
  EXPECT_EQ(ctx().arg<unsigned>("n"), 42u);
  EXPECT_EQ(ctx().arg<unsigned>("u32max"), 4294967295u);
  EXPECT_EQ(ctx().arg<unsigned long>("u32over"), 4294967296ul);
  EXPECT_EQ(ctx().arg<unsigned long long>("big"), 3000000000ull);
  EXPECT_TRUE(Says(error_of([&] { ctx().arg<unsigned>("neg"); }),
                   {"argument 'neg'", "'-7'", "non-negative"}));
  EXPECT_TRUE(Says(error_of([&] { ctx().arg<unsigned>("minus1"); }), {"non-negative"}));
  EXPECT_THROW(ctx().arg<unsigned long>("neg"), Error);
  EXPECT_THROW(ctx().arg<unsigned long long>("neg"), Error);
  EXPECT_TRUE(Says(error_of([&] { ctx().arg<unsigned>("u32over"); }),
                   {"argument 'u32over'", "an integer from 0 to 4294967295"}));
  EXPECT_THROW(ctx().arg<unsigned long long>("huge"), Error);
}

// The narrow integer types the header promises ("any integer type"): each converts in range
// and refuses what does not fit, as int does.
TEST_F(ContextArgsTest, NarrowIntegers) {
  spec_.args["port"] = "8080";
  spec_.args["port_over"] = "65536";
  spec_.args["byte"] = "255";
  spec_.args["small"] = "-128";
  EXPECT_EQ(ctx().arg<std::uint16_t>("port"), 8080u);
  EXPECT_EQ(ctx().arg<std::uint16_t>("absent", 80), 80u);
  EXPECT_EQ(ctx().arg<short>("neg"), -7);
  EXPECT_EQ(ctx().arg<std::uint8_t>("byte"), 255u);
  EXPECT_EQ(ctx().arg<std::int8_t>("small"), -128);
  EXPECT_TRUE(Says(error_of([&] { ctx().arg<std::uint16_t>("port_over"); }),
                   {"argument 'port_over'", "'65536'", "an integer from 0 to 65535"}));
  EXPECT_TRUE(Says(error_of([&] { ctx().arg<std::uint8_t>("kib"); }), {"argument 'kib'", "an integer from 0 to 255"}));
  EXPECT_TRUE(Says(error_of([&] { ctx().arg<std::int8_t>("byte"); }), {"an integer from -128 to 127"}));
  EXPECT_TRUE(Says(error_of([&] { ctx().arg<unsigned short>("neg"); }), {"non-negative"}));
  static_assert(!detail::kArgType<char> && !detail::kArgType<std::string_view> && detail::kArgType<std::uint16_t>);
}

TEST_F(ContextArgsTest, SizesIntoIntegers) {
  EXPECT_EQ(ctx().arg<int>("kib"), 65536);
  EXPECT_EQ(ctx().arg<std::size_t>("kib"), 65536u);
  EXPECT_EQ(ctx().arg<unsigned>("mib"), 1048576u);
  EXPECT_EQ(ctx().arg<long>("bytes"), 100L);
  EXPECT_EQ(ctx().arg<std::uint64_t>("gib4"), 4ull << 30);
  EXPECT_TRUE(Says(error_of([&] { ctx().arg<int>("gib4"); }), {"argument 'gib4'", "an integer from -2147483648 to 2147483647"}));
  EXPECT_THROW(ctx().arg<unsigned>("gib4"), Error);
  EXPECT_TRUE(Says(error_of([&] { ctx().arg<std::size_t>("badsize"); }),
                   {"argument 'badsize'", "'64KB'", "; did you mean 64KiB?; fix it in the topology's args:"}));
}

TEST_F(ContextArgsTest, FloatingPoint) {
  EXPECT_DOUBLE_EQ(ctx().arg<double>("half"), 2.5);
  EXPECT_DOUBLE_EQ(ctx().arg<double>("sci"), -1000.0);
  EXPECT_DOUBLE_EQ(ctx().arg<double>("n"), 42.0);
  EXPECT_FLOAT_EQ(ctx().arg<float>("half"), 2.5f);
  EXPECT_TRUE(Says(error_of([&] { ctx().arg<double>("word"); }),
                   {"filter 'reader'", "argument 'word'", "a number"}));
  EXPECT_THROW(ctx().arg<double>("empty"), Error);
  EXPECT_THROW(ctx().arg<double>("kib"), Error);
  EXPECT_THROW(ctx().arg<float>("word"), Error);
}

TEST_F(ContextArgsTest, PathsResolveAgainstTheTopologyDirectory) {
  using std::filesystem::path;
  EXPECT_EQ(ctx().topology_dir(), "/topo/dir");
  EXPECT_EQ(ctx().arg<path>("rel"), path("/topo/dir/data/words.txt"));
  EXPECT_EQ(ctx().arg<path>("abs"), path("/etc/words.txt"));
  EXPECT_EQ(ctx().arg<path>("dotdot").lexically_normal(), path("/topo/shared/x"));
  EXPECT_TRUE(ctx().arg<path>("name").is_absolute());
  EXPECT_TRUE(Says(error_of([&] { ctx().arg<path>("empty"); }), {"argument 'empty'", "a path"}));
}

TEST_F(ContextArgsTest, AMissingArgumentNamesTheFilterAndTheKey) {
  const std::string message = error_of([&] { ctx().arg("nope"); });
  EXPECT_TRUE(Says(message, {"filter 'reader'", "needs argument 'nope'",
                             "add it to the filter's args: in the topology"}));
  EXPECT_TRUE(Says(error_of([&] { ctx().arg<int>("count"); }), {"'reader'", "'count'"}));
  EXPECT_TRUE(Says(error_of([&] { ctx().arg<std::filesystem::path>("p"); }),
                   {"'reader'", "'p'"}));
}

TEST_F(ContextArgsTest, FallbacksApplyOnlyWhenTheArgumentIsMissing) {
  EXPECT_EQ(ctx().arg("nope", "default"), "default");
  EXPECT_EQ(ctx().arg("name", "default"), "words.txt");
  EXPECT_EQ(ctx().arg<int>("nope", 5), 5);
  EXPECT_EQ(ctx().arg<int>("n", 5), 42);
  EXPECT_EQ(ctx().arg<std::size_t>("nope", std::size_t{7}), 7u);
  EXPECT_TRUE(ctx().arg<bool>("nope", true));
  EXPECT_FALSE(ctx().arg<bool>("f", true));
  EXPECT_DOUBLE_EQ(ctx().arg<double>("nope", 0.5), 0.5);
  EXPECT_EQ(ctx().arg<std::string>("nope", std::string("s")), "s");
  // Present but malformed: the fallback does not hide the mistake.
  EXPECT_THROW(ctx().arg<int>("word", 5), Error);
  EXPECT_THROW(ctx().arg<bool>("maybe", false), Error);
}

TEST_F(ContextArgsTest, MessagesNameTheCopysFilter) {
  spec_.name = "count";
  EXPECT_TRUE(Says(error_of([&] { ctx().arg<int>("word"); }), {"filter 'count'"}));
  EXPECT_TRUE(Says(error_of([&] { ctx().arg("nope"); }), {"filter 'count'"}));
}

TEST_F(ContextArgsTest, TheWholeUnsigned64BitRangeParses) {
  EXPECT_EQ(ctx().arg<std::uint64_t>("u64max"), std::numeric_limits<std::uint64_t>::max());
  EXPECT_TRUE(Says(error_of([&] { ctx().arg<std::uint64_t>("u64over"); }), {"argument 'u64over'", "an integer from 0 to 18446744073709551615"}));
}

TEST_F(ContextArgsTest, IntegersArePlainDecimalText) {
  for (const char* key : {"plus", "lead"}) {
    EXPECT_TRUE(Says(error_of([&] { ctx().arg<int>(key); }), {std::string("argument '") + key + "'", "an integer"}))
        << key;
  }
}

TEST_F(ContextArgsTest, NumbersAreFinite) {
  EXPECT_TRUE(Says(error_of([&] { ctx().arg<double>("nan"); }), {"argument 'nan'", "a number"}));
  EXPECT_TRUE(Says(error_of([&] { ctx().arg<double>("inf"); }), {"argument 'inf'", "a number"}));
  EXPECT_DOUBLE_EQ(ctx().arg<double>("fbig"), 1e300);
  EXPECT_TRUE(Says(error_of([&] { ctx().arg<float>("fbig"); }), {"argument 'fbig'", "in range for a float"}));
}

}  // namespace
}  // namespace sluice
