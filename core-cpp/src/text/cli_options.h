// CLI11 options whose values go through this folder's readers, for the programs that parse
// their command line with CLI11 (sluiced, sluice-appd, the benchmarks): an integer option
// read by parse_integer (all of the text, in range; CLI11's own conversion would take "010"
// as octal), and a check of an ADDR:PORT value by text/address.h's rules. A bad value is a
// CLI::ValidationError that names the option and says what it accepts ("--reps 'x' is not a
// whole number from 1 to 1000"); callers turn CLI11's errors into exit status 2.
//
// Header-only: libsluice does not depend on CLI11, the programs that include this do.
#ifndef SLUICE_TEXT_CLI_OPTIONS_H_
#define SLUICE_TEXT_CLI_OPTIONS_H_

#include <cstdlib>
#include <regex>
#include <string>

#include <CLI/CLI.hpp>

#include "sluice/error.h"
#include "text/address.h"
#include "text/port_range.h"
#include "text/integer.h"

namespace sluice::text {

// Adds `name` (e.g. "--reps") to `app`; its value, a whole number from `min` to `max`, is
// stored in `*target` (not owned; must outlive app.parse). Default: what `*target` holds
// (shown in --help when it is in range).
template <typename T>
CLI::Option* add_integer_option(CLI::App& app, const std::string& name, T* target, const std::string& description,
                                T min, T max) {
  CLI::Option* option = app.add_option_function<std::string>(
      name,
      [target, name, min, max](const std::string& value) {
        try {
          *target = parse_integer_or_throw<T>(value, name, min, max);
        } catch (const Error& e) {
          throw CLI::ValidationError(e.what());
        }
      },
      *target < min ? description : description + " (default: " + std::to_string(*target) + ")");
  return option->type_name("N");
}

// A check of an ADDR:PORT value: the parse_host_port problem, or "" when the value follows
// `rules`.
inline CLI::Validator address_check(const AddressRules& rules) {
  return CLI::Validator(
      [rules](std::string& value) {
        std::string problem;
        return parse_host_port(value, rules, &problem) ? std::string() : problem;
      },
      "");
}

// A check of a port range ("7701-7799", or one port): text/port_range.h.
inline CLI::Validator port_range_check() {
  return CLI::Validator(
      [](std::string& value) {
        std::string problem;
        return parse_port_range(value, &problem) ? std::string() : problem;
      },
      "");
}

// A check of a duration in seconds: a decimal number (fractions allowed) above 0, or from 0
// when `zero_allowed`, and at most a year; the problem says what is accepted (CLI11's own
// range check printed the largest double, 309 digits).
inline CLI::Validator seconds_check(bool zero_allowed) {
  return CLI::Validator(
      [zero_allowed](std::string& value) {
        constexpr double kYear = 365.0 * 24 * 3600;
        // Decimal digits only: strtod would also take " 1", hexadecimal (0x10) and inf.
        static const std::regex kDecimal(R"([0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?|\.[0-9]+([eE][-+]?[0-9]+)?)");
        double seconds = -1;
        if (std::regex_match(value, kDecimal)) seconds = std::strtod(value.c_str(), nullptr);  // 0 on underflow
        const bool ok = (zero_allowed ? seconds >= 0 : seconds > 0) && seconds <= kYear;
        if (ok) return std::string();
        return "'" + value + "' is not a number of seconds " +
               (zero_allowed ? "from 0 to 31536000 (a year)" : "above 0 and at most 31536000 (a year)") +
               ", e.g. 30 or 2.5";
      },
      "SECONDS");
}

}  // namespace sluice::text

#endif  // SLUICE_TEXT_CLI_OPTIONS_H_
