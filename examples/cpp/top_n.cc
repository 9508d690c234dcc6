#include "top_n.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string_view>
#include <utility>
#include <vector>

namespace {

using Entry = std::pair<std::string, std::uint64_t>;

// Most frequent first; equal counts in the words' byte order, so every copy and the merge
// rank words the same way.
bool before(const Entry& a, const Entry& b) { return a.second != b.second ? a.second > b.second : a.first < b.first; }

// The first `n` of `entries` in that order.
std::vector<Entry> top(std::vector<Entry> entries, std::size_t n) {
  n = std::min(n, entries.size());
  std::partial_sort(entries.begin(), entries.begin() + static_cast<std::ptrdiff_t>(n), entries.end(), before);
  entries.resize(n);
  return entries;
}

// Writes `text` to `out`, in as few buffers of the stream's size as it takes.
void write_text(sluice::OutputStream& out, std::string_view text) {
  while (!text.empty()) {
    sluice::Buffer buffer = out.allocate();
    std::size_t n = std::min(text.size(), buffer.capacity());
    if (n < text.size()) {
      const std::size_t line_end = text.rfind('\n', n - 1);  // whole lines per buffer
      if (line_end == std::string_view::npos) {
        throw sluice::Error("a line of a partial result does not fit the stream's buffer_size of " +
                            std::to_string(buffer.capacity()) + " bytes; raise buffer_size");
      }
      n = line_end + 1;
    }
    buffer.resize(n);
    std::memcpy(buffer.data(), text.data(), n);
    out.write(std::move(buffer));
    text.remove_prefix(n);
  }
}

}  // namespace

void PartialTopN::process(sluice::Context& ctx) {
  auto& in = ctx.input("in");
  std::uint64_t words = 0;
  while (auto word = in.read()) {
    ++words;
    auto found = counts_.find(word->text());
    if (found == counts_.end()) {
      counts_.emplace(std::string(word->text()), 1);
    } else {
      ++found->second;
    }
  }
  // End of work for this copy: its share of the words is complete. Send the partial result.
  std::string result = "#partial " + std::to_string(words) + " " + std::to_string(counts_.size()) + "\n";
  for (const auto& [word, count] : top({counts_.begin(), counts_.end()}, ctx.arg<std::size_t>("n", 10))) {
    result += word + "\t" + std::to_string(count) + "\n";
  }
  write_text(ctx.output("out"), result);
}

void MergeTopN::process(sluice::Context& ctx) {
  std::vector<Entry> candidates;
  std::uint64_t partials = 0, words = 0, distinct = 0;
  auto& in = ctx.input("in");
  std::string pending;  // a partial result may span buffers; lines never do
  while (auto buffer = in.read()) {
    std::string_view text = buffer->text();
    while (!text.empty()) {
      const std::size_t end = text.find('\n');
      const std::string_view line = text.substr(0, end);
      text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
      if (line.rfind("#partial ", 0) == 0) {
        unsigned long long w = 0, d = 0;
        if (std::sscanf(std::string(line).c_str(), "#partial %llu %llu", &w, &d) != 2) {
          throw sluice::Error("malformed partial result header '" + std::string(line) + "'");
        }
        ++partials;
        words += w;
        distinct += d;  // exact: by_key gives each word to one copy only
        continue;
      }
      const std::size_t tab = line.find('\t');
      if (tab == std::string_view::npos) throw sluice::Error("malformed partial result line '" + std::string(line) + "'");
      candidates.emplace_back(std::string(line.substr(0, tab)), std::stoull(std::string(line.substr(tab + 1))));
    }
  }
  // End of work: every PartialTopN copy has sent its result. A word appears in at most one
  // partial list (by_key), so the merge is a sort of the candidates, no summing.
  const std::vector<Entry> best = top(std::move(candidates), ctx.arg<std::size_t>("n", 10));
  std::cout << "unit " << ctx.work_index() << " [" << ctx.work() << "]: " << partials << " partial results, " << words
            << " words, " << distinct << " distinct; top " << best.size() << ":\n";
  for (const auto& [word, count] : best) std::cout << "  " << count << "\t" << word << "\n";
  std::cout << std::flush;
}

SLUICE_FILTER(PartialTopN)
SLUICE_FILTER(MergeTopN)
