// The sluice filter API: include this one header to write a C++ filter.
//
//   class Upper : public sluice::Filter {
//    public:
//     void process(sluice::Context& ctx) override {
//       auto& in = ctx.input("in");
//       auto& out = ctx.output("out");
//       while (auto buf = in.read()) {
//         for (auto& b : buf->bytes()) b = std::byte(std::toupper(int(b)));
//         out.write(std::move(*buf));
//       }
//     }
//   };
//   SLUICE_FILTER(Upper)
#ifndef SLUICE_SLUICE_H_
#define SLUICE_SLUICE_H_

#include "sluice/buffer.h"
#include "sluice/context.h"
#include "sluice/error.h"
#include "sluice/filter.h"
#include "sluice/logger.h"
#include "sluice/stream.h"

#endif  // SLUICE_SLUICE_H_
