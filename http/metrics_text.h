// MetricsText: writes the Prometheus text exposition format (version 0.0.4), the format
// `/metrics` answers in and `promtool check metrics` reads.
//
//   MetricsText m;
//   m.family("sluice_stream_buffers_total", "counter", "Buffers written to the stream.");
//   m.sample("sluice_stream_buffers_total", {{"stream", "a.out -> b.in"}}, std::uint64_t{42});
//   std::string text = m.str();
//
// Each family's samples must follow its family() call, with nothing else in between (the
// format's rule). Label values are escaped here (\\, \", \n); names are the caller's to
// get right (the checks are assert()s: a wrong name is a bug, not input).
//
// Not thread-safe; one writer builds one text.
#ifndef SLUICE_HTTP_METRICS_TEXT_H_
#define SLUICE_HTTP_METRICS_TEXT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sluice::http {

using Labels = std::vector<std::pair<std::string, std::string>>;

class MetricsText {
 public:
  // "# HELP name help" and "# TYPE name type". type: counter, gauge, untyped (a histogram:
  // histogram()).
  void family(std::string_view name, std::string_view type, std::string_view help);
  // "name{l1="v1",...} value". Integers are written exactly; doubles round-trip.
  void sample(std::string_view name, const Labels& labels, std::uint64_t value);
  void sample(std::string_view name, const Labels& labels, double value);
  void sample(std::string_view name, const Labels& labels, int value) {
    sample(name, labels, static_cast<double>(value));
  }

  // A whole histogram family: "# HELP"/"# TYPE name histogram", then name_bucket{le="B"} for
  // each of `bounds` (ascending) and "+Inf", cumulative, then name_sum and name_count.
  // `counts[i]` is how many observations fell in (bounds[i-1], bounds[i]]; `over` those above
  // the last bound. REQUIRES: counts.size() == bounds.size().
  void histogram(std::string_view name, std::string_view help, const Labels& labels,
                 const std::vector<double>& bounds, const std::vector<std::uint64_t>& counts, std::uint64_t over,
                 double sum);

  const std::string& str() const { return text_; }

  // The Content-Type of this format.
  static constexpr const char* kContentType = "text/plain; version=0.0.4; charset=utf-8";

 private:
  void header(std::string_view name, std::string_view type, std::string_view help);  // # HELP, # TYPE
  void start_sample(std::string_view name, const Labels& labels);

  std::string text_;
};

// "3.5", "130", "1e-09", "NaN", "+Inf": how the format writes a double (a whole number below
// 2^53 whole, else the shortest exact form).
std::string format_double(double value);

}  // namespace sluice::http

#endif  // SLUICE_HTTP_METRICS_TEXT_H_
