// An out-of-tree filter library: Greet -> Rot13 -> Print.
#include <cctype>
#include <cstring>
#include <iostream>
#include <string>

#include <sluice/sluice.h>

// Source: writes `count` (args, default 3) lines "hello <n>".
class Greet : public sluice::Filter {
 public:
  void process(sluice::Context& ctx) override {
    auto& out = ctx.output("out");
    for (int i = 0; i < ctx.arg<int>("count", 3); ++i) {
      std::string line = "hello " + std::to_string(i);
      sluice::Buffer b = out.allocate();
      b.resize(line.size());
      std::memcpy(b.data(), line.data(), line.size());
      out.write(std::move(b));
    }
  }
};

// Rotates letters by 13 in place and passes the buffer on.
class Rot13 : public sluice::Filter {
 public:
  void process(sluice::Context& ctx) override {
    auto& in = ctx.input("in");
    auto& out = ctx.output("out");
    while (auto b = in.read()) {
      for (auto& byte : b->bytes()) {
        int c = static_cast<int>(byte);
        if (std::isalpha(c)) {
          int base = std::islower(c) ? 'a' : 'A';
          byte = std::byte(static_cast<unsigned char>((c - base + 13) % 26 + base));
        }
      }
      out.write(std::move(*b));
    }
  }
};

// Sink: prints each buffer as a line.
class Print : public sluice::Filter {
 public:
  void process(sluice::Context& ctx) override {
    auto& in = ctx.input("in");
    while (auto b = in.read()) std::cout << b->text() << "\n";
  }
};

SLUICE_FILTER(Greet)
SLUICE_FILTER(Rot13)
SLUICE_FILTER(Print)
