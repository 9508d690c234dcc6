// Context: what a filter copy sees of the running application.
//
// The runtime owns the Context and passes it to init, process and finalize. It lives as
// long as the filter object; streams and loggers it returns stay valid as long as it does.
// Use it only from the copy's init, process and finalize (not from threads they start).
#ifndef SLUICE_CONTEXT_H_
#define SLUICE_CONTEXT_H_

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <type_traits>

#include "sluice/error.h"
#include "sluice/logger.h"
#include "sluice/stream.h"

namespace sluice {

namespace detail {
// The types Context::arg<T> converts an argument to (runtime/context_args.cc): character
// types are left out, since "a" and "65" would both be plausible meanings.
template <typename T>
inline constexpr bool kArgType =
    std::is_same_v<T, std::string> || std::is_same_v<T, bool> || std::is_same_v<T, float> ||
    std::is_same_v<T, double> || std::is_same_v<T, std::filesystem::path> ||
    (std::is_integral_v<T> && !std::is_same_v<T, char> && !std::is_same_v<T, wchar_t> &&
     !std::is_same_v<T, char8_t> && !std::is_same_v<T, char16_t> && !std::is_same_v<T, char32_t>);
}  // namespace detail

class Context {
 public:
  Context() = default;
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  virtual ~Context() = default;

  // The stream connected to the named port. Throws sluice::Error naming the filter and
  // port (and the ports that are connected) when the topology connects no stream there.
  virtual InputStream& input(std::string_view port) = 0;
  virtual OutputStream& output(std::string_view port) = 0;
  // Whether the topology connects a stream to the port.
  virtual bool has_input(std::string_view port) const = 0;
  virtual bool has_output(std::string_view port) const = 0;

  // The unit of work's payload (the `work:` entry or --work argument; "" by default),
  // and its index from 0 within this run.
  virtual const std::string& work() const = 0;
  virtual std::uint64_t work_index() const = 0;

  // This copy's index in [0, copy_count()), and the filter's total number of copies
  // across all hosts.
  virtual int copy_index() const = 0;
  virtual int copy_count() const = 0;
  // The filter's name in the topology, and the host this copy runs on ("local" when the
  // application runs embedded in one process).
  virtual const std::string& filter_name() const = 0;
  virtual const std::string& host() const = 0;

  virtual const Logger& log() const = 0;

  // The absolute directory of the topology file; relative path arguments resolve here.
  virtual const std::string& topology_dir() const = 0;

  // The raw text of an argument from the topology's `args:`, or nullptr when absent.
  virtual const std::string* find_arg(std::string_view key) const = 0;

  // Typed arguments. T may be std::string, bool (true/false, yes/no, on/off, 1/0), any
  // integer type but the character types (plain decimal, or a size with B/KiB/MiB/GiB;
  // std::uint8_t and std::int8_t are numbers too), float or double (finite), or
  // std::filesystem::path (a relative path resolves against topology_dir()). Another T does
  // not compile.
  // arg(key) throws sluice::Error when the argument is missing or does not parse as T;
  // arg(key, fallback) returns fallback when it is missing (and still throws when present
  // but malformed).
  template <typename T = std::string>
  T arg(std::string_view key) const {
    static_assert(detail::kArgType<T>, "Context::arg<T>: T must be std::string, bool, an integer type other "
                                       "than char, float, double or std::filesystem::path");
    const std::string* raw = find_arg(key);
    if (raw == nullptr) throw Error(missing_arg_message(key));
    return convert_arg<T>(key, *raw);
  }
  template <typename T>
  T arg(std::string_view key, T fallback) const {
    static_assert(detail::kArgType<T>, "Context::arg<T>: T must be std::string, bool, an integer type other "
                                       "than char, float, double or std::filesystem::path");
    const std::string* raw = find_arg(key);
    return raw == nullptr ? fallback : convert_arg<T>(key, *raw);
  }
  std::string arg(std::string_view key, const char* fallback) const {
    return arg<std::string>(key, std::string(fallback));
  }

 private:
  template <typename T>
  T convert_arg(std::string_view key, const std::string& raw) const;
  std::string missing_arg_message(std::string_view key) const;
};

// Conversions, defined in libsluice for the supported types.
template <> std::string Context::convert_arg<std::string>(std::string_view, const std::string&) const;
template <> bool Context::convert_arg<bool>(std::string_view, const std::string&) const;
template <> signed char Context::convert_arg<signed char>(std::string_view, const std::string&) const;
template <> unsigned char Context::convert_arg<unsigned char>(std::string_view, const std::string&) const;
template <> short Context::convert_arg<short>(std::string_view, const std::string&) const;
template <> unsigned short Context::convert_arg<unsigned short>(std::string_view, const std::string&) const;
template <> int Context::convert_arg<int>(std::string_view, const std::string&) const;
template <> long Context::convert_arg<long>(std::string_view, const std::string&) const;
template <> long long Context::convert_arg<long long>(std::string_view, const std::string&) const;
template <> unsigned Context::convert_arg<unsigned>(std::string_view, const std::string&) const;
template <> unsigned long Context::convert_arg<unsigned long>(std::string_view, const std::string&) const;
template <> unsigned long long Context::convert_arg<unsigned long long>(std::string_view, const std::string&) const;
template <> float Context::convert_arg<float>(std::string_view, const std::string&) const;
template <> double Context::convert_arg<double>(std::string_view, const std::string&) const;
template <> std::filesystem::path Context::convert_arg<std::filesystem::path>(std::string_view, const std::string&) const;

}  // namespace sluice

#endif  // SLUICE_CONTEXT_H_
