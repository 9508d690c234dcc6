#include "http/metrics_text.h"

#include <cassert>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "text/shortened.h"

namespace sluice::http {

namespace {

[[maybe_unused]] bool valid_name(std::string_view name, bool label) {
  if (name.empty()) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (!label && c == ':');
    if (!letter && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

// HELP text: backslash and newline escaped; label values: the double quote too. The format is
// UTF-8 (a scraper drops a whole scrape over one bad byte): a label value is bytes a peer chose
// (a unit's payload), so what is not UTF-8 becomes U+FFFD.
void append_escaped(std::string& out, std::string_view text, bool quote) {
  for (char c : text::valid_utf8(text)) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (quote && c == '"') {
      out += "\\\"";
    } else {
      out += c;
    }
  }
}

}  // namespace

std::string format_double(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char text[32];
  // A whole number is written whole ("130", not "1.3e+02": an exit status, a count), up to
  // where doubles stop holding every integer (2^53).
  if (value == std::trunc(value) && std::fabs(value) < 9007199254740992.0) {
    std::snprintf(text, sizeof text, "%.0f", value == 0 ? 0.0 : value);  // no "-0"
    return text;
  }
  // Else the shortest form that reads back as the same double.
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(text, sizeof text, "%.*g", precision, value);
    if (std::strtod(text, nullptr) == value) break;
  }
  return text;
}

void MetricsText::family(std::string_view name, std::string_view type, std::string_view help) {
  assert(type == "counter" || type == "gauge" || type == "untyped");
  header(name, type, help);
}

void MetricsText::header(std::string_view name, std::string_view type, std::string_view help) {
  assert(valid_name(name, false));
  text_ += "# HELP ";
  text_ += name;
  text_ += ' ';
  append_escaped(text_, help, false);
  text_ += "\n# TYPE ";
  text_ += name;
  text_ += ' ';
  text_ += type;
  text_ += '\n';
}

void MetricsText::start_sample(std::string_view name, const Labels& labels) {
  assert(valid_name(name, false));
  text_ += name;
  if (!labels.empty()) {
    text_ += '{';
    for (std::size_t i = 0; i < labels.size(); ++i) {
      assert(valid_name(labels[i].first, true) && !labels[i].first.starts_with("__"));
      if (i > 0) text_ += ',';
      text_ += labels[i].first;
      text_ += "=\"";
      append_escaped(text_, labels[i].second, true);
      text_ += '"';
    }
    text_ += '}';
  }
  text_ += ' ';
}

void MetricsText::histogram(std::string_view name, std::string_view help, const Labels& labels,
                            const std::vector<double>& bounds, const std::vector<std::uint64_t>& counts,
                            std::uint64_t over, double sum) {
  assert(counts.size() == bounds.size());
  header(name, "histogram", help);
  const std::string bucket = std::string(name) + "_bucket";
  std::uint64_t below = 0;
  for (std::size_t i = 0; i <= bounds.size(); ++i) {
    below += i < bounds.size() ? counts[i] : over;
    Labels with_le = labels;
    with_le.emplace_back("le", i < bounds.size() ? format_double(bounds[i]) : "+Inf");
    sample(bucket, with_le, below);
  }
  sample(std::string(name) + "_sum", labels, sum);
  sample(std::string(name) + "_count", labels, below);
}

void MetricsText::sample(std::string_view name, const Labels& labels, std::uint64_t value) {
  start_sample(name, labels);
  text_ += std::to_string(value);
  text_ += '\n';
}

void MetricsText::sample(std::string_view name, const Labels& labels, double value) {
  start_sample(name, labels);
  text_ += format_double(value);
  text_ += '\n';
}

}  // namespace sluice::http
