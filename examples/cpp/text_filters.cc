#include "text_filters.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <vector>


std::uint64_t word_key(std::string_view word) {
  std::uint64_t hash = 14695981039346656037ULL;
  for (char c : word) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ULL;
  }
  return hash;
}

namespace {
// Appends `text` to the output buffer, sending it first when it would not fit.
void append(sluice::OutputStream& out, sluice::Buffer& buffer, std::string_view text) {
  if (buffer.size() + text.size() > buffer.capacity()) {
    if (buffer.size() > 0) out.write(std::move(buffer));
    buffer = out.allocate();
  }
  if (text.size() > buffer.capacity()) {
    throw sluice::Error("a line of " + std::to_string(text.size()) +
                        " bytes does not fit the stream's buffer_size of " +
                        std::to_string(buffer.capacity()) + "; raise buffer_size");
  }
  std::size_t at = buffer.size();
  buffer.resize(at + text.size());
  std::memcpy(buffer.data() + at, text.data(), text.size());
}
}  // namespace

void LineReader::process(sluice::Context& ctx) {
  const std::filesystem::path path = ctx.arg<std::filesystem::path>("path");
  const long repeat = ctx.arg<long>("repeat", 1);
  if (repeat < 1) throw sluice::Error("args.repeat is " + std::to_string(repeat) + "; give 1 or more");
  auto& out = ctx.output("out");
  sluice::Buffer buffer = out.allocate();
  for (long pass = 0; pass < repeat; ++pass) {
    std::ifstream file(path);
    if (!file) throw sluice::Error("cannot open '" + path.string() + "'; check args.path (relative to the topology file)");
    std::string line;
    while (std::getline(file, line)) {
      line.push_back('\n');
      append(out, buffer, line);
    }
  }
  if (buffer.size() > 0) out.write(std::move(buffer));
}

void Tokenize::process(sluice::Context& ctx) {
  auto& in = ctx.input("in");
  auto& out = ctx.output("out");
  std::string word;
  auto emit = [&] {
    if (word.empty()) return;
    sluice::Buffer buffer = out.allocate();
    buffer.resize(std::min(word.size(), buffer.capacity()));
    std::memcpy(buffer.data(), word.data(), buffer.size());
    buffer.set_key(word_key(buffer.text()));
    out.write(std::move(buffer));
    word.clear();
  };
  while (auto text = in.read()) {
    for (char c : text->text()) {
      if (std::isalpha(static_cast<unsigned char>(c)) || (c == '\'' && !word.empty())) {
        word.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
      } else {
        emit();
      }
    }
    emit();  // buffers hold whole lines, so a word never spans two
  }
}

void WordCount::process(sluice::Context& ctx) {
  auto& in = ctx.input("in");
  while (auto word = in.read()) {
    auto found = counts_.find(word->text());
    if (found == counts_.end()) {
      counts_.emplace(std::string(word->text()), 1);
    } else {
      ++found->second;
    }
  }
  auto& out = ctx.output("out");
  sluice::Buffer buffer = out.allocate();
  for (const auto& [word, count] : counts_) {
    append(out, buffer, word + "\t" + std::to_string(count) + "\n");
  }
  if (buffer.size() > 0) out.write(std::move(buffer));
}

void TopWords::process(sluice::Context& ctx) {
  std::map<std::string, std::uint64_t> counts;
  auto& in = ctx.input("in");
  while (auto lines = in.read()) {
    std::string_view text = lines->text();
    while (!text.empty()) {
      std::size_t end = text.find('\n');
      std::string_view line = text.substr(0, end);
      std::size_t tab = line.find('\t');
      if (tab != std::string_view::npos) {
        counts[std::string(line.substr(0, tab))] += std::stoull(std::string(line.substr(tab + 1)));
      }
      text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
    }
  }
  std::vector<std::pair<std::string, std::uint64_t>> sorted(counts.begin(), counts.end());
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  std::uint64_t total = 0;
  for (const auto& entry : sorted) total += entry.second;
  const std::size_t top = ctx.arg<std::size_t>("top", 10);
  std::cout << "unit " << ctx.work_index() << " [" << ctx.work() << "]: " << total << " words, "
            << sorted.size() << " distinct; top " << std::min(top, sorted.size()) << ":\n";
  for (std::size_t i = 0; i < top && i < sorted.size(); ++i) {
    std::cout << "  " << sorted[i].second << "\t" << sorted[i].first << "\n";
  }
  std::cout << std::flush;
}


SLUICE_FILTER_ARGS(LineReader, "path")
SLUICE_FILTER(Tokenize)
SLUICE_FILTER(WordCount)
SLUICE_FILTER(TopWords)
