// Combining the copies of a by_key stage: each PartialTopN copy counts the words that by_key
// sends it and, at end of work, writes its own top N; one MergeTopN copy reads every partial
// result and writes the overall top N. (docs/guide.md, "Combining the copies' results";
// examples/topn.yaml: LineReader -> Tokenize -> PartialTopN x3 -> MergeTopN.)
//
// Why the merge is exact: by_key sends every occurrence of a word to the same copy, so each
// word's count is whole in one copy, and a word in the overall top N is also in its copy's
// top N (fewer competitors, the same order: count, then the word). With round_robin a word's
// count would be split over the copies, and partial top lists could miss it.
#ifndef SLUICE_EXAMPLES_TOP_N_H_
#define SLUICE_EXAMPLES_TOP_N_H_

#include <cstdint>
#include <map>
#include <string>

#include <sluice/sluice.h>

// Reads one word per buffer (Tokenize's output) and counts them. At end of work (when its
// input is drained) writes one partial result: a line "#partial WORDS DISTINCT", then its
// top `n` (args, default 10) as "word<TAB>count" lines, most frequent first.
class PartialTopN : public sluice::Filter {
 public:
  void init(sluice::Context& ctx) override { counts_.clear(); }
  void process(sluice::Context& ctx) override;

 private:
  std::map<std::string, std::uint64_t, std::less<>> counts_;
};

// One copy. Reads the partial results of every PartialTopN copy: its input ends only after
// every one of them finished the unit of work, so when the loop ends all of them are in.
// Prints the unit's totals and its top `n` (args, default 10) on stdout:
//   unit 0 [first]: 3 partial results, 4100 words, 310 distinct; top 10:
//     250	the
class MergeTopN : public sluice::Filter {
 public:
  void process(sluice::Context& ctx) override;
};

#endif  // SLUICE_EXAMPLES_TOP_N_H_
