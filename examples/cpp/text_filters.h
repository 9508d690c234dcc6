// Word-count example filters: LineReader -> Tokenize -> WordCount -> TopWords.
#ifndef SLUICE_EXAMPLES_TEXT_FILTERS_H_
#define SLUICE_EXAMPLES_TEXT_FILTERS_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include <sluice/sluice.h>


// 64-bit FNV-1a: the key that makes equal words meet the same WordCount copy.
std::uint64_t word_key(std::string_view word);

// Source. Reads the text file `path` (args) `repeat` times (args, default 1) and writes it
// as whole lines packed into buffers of the output stream's size.
class LineReader : public sluice::Filter {
 public:
  void process(sluice::Context& ctx) override;
};

// Splits text into lower-case words; writes one word per buffer, keyed by word_key.
class Tokenize : public sluice::Filter {
 public:
  void process(sluice::Context& ctx) override;
};

// Counts the words it receives; at end of work writes "word<TAB>count" lines.
class WordCount : public sluice::Filter {
 public:
  void init(sluice::Context& ctx) override { counts_.clear(); }
  void process(sluice::Context& ctx) override;

 private:
  std::map<std::string, std::uint64_t, std::less<>> counts_;
};

// Sink. Merges counts and prints the `top` (args, default 10) most frequent words.
class TopWords : public sluice::Filter {
 public:
  void process(sluice::Context& ctx) override;
};


#endif  // SLUICE_EXAMPLES_TEXT_FILTERS_H_
